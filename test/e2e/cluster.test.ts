// End-to-end: etcd on a real control-plane node under QEMU (512 MiB), driven with bronzectl over
// mTLS through the forwarded API port. The node boots with etcd waiting for bootstrap (the boot
// is not held up by it); `bronzectl bootstrap` starts a one-member cluster with the image's etcd
// on EPHEMERAL's /var/lib/etcd; etcd members, etcd status, service etcd, get members answer; a
// second bootstrap and a leave of the only member are refused, each with its reason.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QemuVM } from '../../image-builder/qemu.ts';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { bronzectl, bronzectlUntilOk, type CliResult } from '../lib/bronzectl.ts';
import { consoleFile } from '../lib/console-log.ts';
import { serveFiles, type FileServer } from '../lib/http-files.ts';
import { freePort } from '../lib/ports.ts';

const BOOT = 300_000;

const rows = (out: string) =>
  out
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(/\s{2,}/));

async function until(args: string[], config: string, ok: (r: CliResult) => boolean, timeoutMs: number): Promise<CliResult> {
  const deadline = Date.now() + timeoutMs;
  let last: CliResult;
  do {
    last = await bronzectl(args, { config, timeoutMs: 30_000 });
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 2000));
  } while (Date.now() < deadline);
  return last;
}

describe('etcd on a control-plane node: bootstrap, members', () => {
  let vm: QemuVM;
  let files: FileServer;
  let dir: string;
  let config: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-cluster-e2e-'));
    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'etcd-e2e', endpoint: 'https://10.0.2.15:6443', additionalSANs: ['127.0.0.1'], secrets });
    files = await serveFiles({ '/controlplane.yaml': cfg.controlplane });
    const port = await freePort();
    config = path.join(dir, 'bronzeconfig');
    await save(config, await newClientConfig({ contextName: 'etcd-e2e', endpoints: [`127.0.0.1:${port}`], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
    vm = new QemuVM({ apiPort: port, append: `ip=dhcp bronze.config=http://10.0.2.2:${files.port}/controlplane.yaml` }, consoleFile('cluster')).start();
    await vm.waitFor(/machined\[1\]: all 5 services Running \(.*etcd waits for bootstrap/, BOOT);
  }, BOOT + 60_000);

  afterAll(async () => {
    vm?.kill();
    await files?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('before bootstrap: etcd waits in Preparing, and the etcd API says it is not running', async () => {
    const s = await bronzectlUntilOk(['service', 'etcd'], { config, timeoutMs: 60_000 });
    expect(s.stdout).toMatch(/STATE\s+Preparing/);
    expect(s.stdout).toMatch(/Waiting for bootstrap/);
    const m = await bronzectl(['etcd', 'members'], { config });
    expect(m.code).toBe(1);
    expect(m.stderr).toMatch(/etcd is not running on this node \(it waits for bronzectl bootstrap/);
  });

  it('bootstrap starts a one-member cluster: etcd Running and healthy, members and status answer', async () => {
    const b = await bronzectl(['bootstrap'], { config });
    expect(b.stderr).toBe('');
    expect(b.code).toBe(0);
    const s = await until(['service', 'etcd'], config, (r) => /STATE\s+Running/.test(r.stdout) && /HEALTH\s+OK/.test(r.stdout), 180_000);
    expect(s.stdout).toMatch(/HEALTH\s+OK/);
    const m = await until(['etcd', 'members'], config, (r) => r.code === 0 && rows(r.stdout).length === 1, 60_000);
    expect(m.stdout.split('\n')[0]).toMatch(/^NODE\s+ID\s+HOSTNAME\s+PEER URLS\s+CLIENT URLS\s+LEARNER$/);
    const [row] = rows(m.stdout);
    expect(row![3]).toBe('https://10.0.2.15:2380');
    expect(row![4]).toBe('https://10.0.2.15:2379');
    expect(row![5]).toBe('false');
    const st = await bronzectl(['etcd', 'status'], { config });
    expect(st.code).toBe(0);
    expect(rows(st.stdout)).toHaveLength(1);
    // etcd's own log, through the API: its data is on /var (EPHEMERAL).
    const logs = await bronzectl(['logs', 'etcd'], { config });
    expect(logs.stdout).toMatch(/data dir = \/var\/lib\/etcd/);
  }, 300_000);

  it('get members lists the node as a controlplane Member', async () => {
    const r = await until(['get', 'members'], config, (x) => x.code === 0 && /controlplane/.test(x.stdout), 60_000);
    expect(r.stdout.split('\n')[0]).toMatch(/NODE\s+NAMESPACE\s+TYPE\s+ID\s+VERSION\s+HOSTNAME\s+MACHINE TYPE\s+OS\s+ADDRESSES/);
    expect(r.stdout).toMatch(/cluster\s+Member\s+\S+\s+\d+\s+\S+\s+controlplane\s+Bronze \(v[^)]+\)\s+\[.*"10\.0\.2\.15".*\]/);
  }, 90_000);

  it('a second bootstrap, and a leave of the only member, are refused with their reasons', async () => {
    const again = await bronzectl(['bootstrap'], { config });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/etcd data directory is not empty/);
    const leave = await bronzectl(['etcd', 'leave'], { config });
    expect(leave.code).toBe(1);
    expect(leave.stderr).toMatch(/leaving etcd would remove the only etcd member/);
  });
});
