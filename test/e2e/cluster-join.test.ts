// End-to-end: two control planes under QEMU (512 MiB each) on a private link between them
// (QEMU's socket netdev over the host's loopback, static 192.168.50.x addresses from the
// configuration), each with its API forwarded to 127.0.0.1. cp1 is bootstrapped; cp2 finds the
// cluster through the control-plane endpoint (cp1), joins as a learner and is promoted, with no
// command of its own. bronzectl then sees both members from either node, both Member resources,
// and health passes; a reboot of either is refused for quorum.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QemuVM } from '../../image-builder/qemu.ts';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { bronzectl, type CliResult } from '../lib/bronzectl.ts';
import { consoleFile } from '../lib/console-log.ts';
import { serveFiles, type FileServer } from '../lib/http-files.ts';
import { freePort } from '../lib/ports.ts';

const BOOT = 400_000;
const IPS = ['192.168.50.1', '192.168.50.2'];
const MACS = ['52:54:00:50:00:01', '52:54:00:50:00:02'];

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

/** The control-plane configuration with node i's link to the other (static address, found by its MAC). */
function nodeConfig(base: string, i: number): string {
  const docs = YAML.parseAllDocuments(base);
  const v1 = docs.find((d) => (d.toJS() as { machine?: unknown })?.machine !== undefined)!;
  v1.setIn(['machine', 'network', 'interfaces'], [
    { deviceSelector: { hardwareAddr: MACS[i] }, dhcp: false, addresses: [`${IPS[i]}/24`] },
    { deviceSelector: { hardwareAddr: '52:54:00:12:34:56' }, dhcp: true },
  ]);
  v1.setIn(['cluster', 'etcd', 'advertisedSubnets'], ['192.168.50.0/24']);
  return docs.map((d) => d.toString()).join('');
}

describe('two control planes: bootstrap one, the other joins by itself', () => {
  const vms: QemuVM[] = [];
  let files: FileServer;
  let dir: string;
  let config: string;
  let hostnames: string[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-join-e2e-'));
    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'join-e2e', endpoint: `https://${IPS[0]}:6443`, additionalSANs: ['127.0.0.1'], secrets });
    files = await serveFiles({ '/cp1.yaml': nodeConfig(cfg.controlplane, 0), '/cp2.yaml': nodeConfig(cfg.controlplane, 1) });
    const link = await freePort();
    const ports = [await freePort(), await freePort()];
    config = path.join(dir, 'bronzeconfig');
    await save(config, await newClientConfig({ contextName: 'join-e2e', endpoints: [`127.0.0.1:${ports[0]}`], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
    for (let i = 0; i < 2; i++) {
      const net = i === 0 ? `listen=127.0.0.1:${link}` : `connect=127.0.0.1:${link}`;
      vms.push(
        new QemuVM(
          {
            apiPort: ports[i],
            // Each its own SMBIOS UUID: the node's identity (their user-network MACs are the same).
            uuid: crypto.randomUUID(),
            append: `ip=dhcp bronze.config=http://10.0.2.2:${files.port}/cp${i + 1}.yaml`,
            extraArgs: ['-netdev', `socket,id=link,${net}`, '-device', `virtio-net-pci,netdev=link,mac=${MACS[i]}`],
          },
          consoleFile(`join-cp${i + 1}`),
        ).start(),
      );
      // The listening side first: QEMU's connect side gives up when nobody listens.
      if (i === 0) await new Promise((r) => setTimeout(r, 2000));
    }
    await Promise.all(vms.map((vm) => vm.waitFor(/machined\[1\]: all 5 services Running \(.*etcd waits/, BOOT)));
  }, BOOT + 60_000);

  afterAll(async () => {
    for (const vm of vms) vm.kill();
    await files?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('before bootstrap: etcd waits in Preparing, and the etcd API says it is not running', async () => {
    const s = await until(['-n', IPS[0]!, 'service', 'etcd'], config, (r) => /Waiting for bootstrap/.test(r.stdout), 60_000);
    expect(s.stdout).toMatch(/STATE\s+Preparing/);
    const m = await bronzectl(['-n', IPS[0]!, 'etcd', 'members'], { config });
    expect(m.code).toBe(1);
    expect(m.stderr).toMatch(/etcd is not running on this node \(it waits for bronzectl bootstrap/);
  }, 90_000);

  it('bootstrap on cp1; cp2 joins as a learner through the endpoint and is promoted', async () => {
    const b = await bronzectl(['-n', IPS[0]!, 'bootstrap'], { config });
    expect(b.stderr).toBe('');
    expect(b.code).toBe(0);
    const promoted = (r: CliResult) => r.code === 0 && rows(r.stdout).length === 2 && rows(r.stdout).every((row) => row[5] === 'false');
    const m = await until(['-n', IPS[0]!, 'etcd', 'members'], config, promoted, 240_000);
    expect(promoted(m), m.stdout + m.stderr).toBe(true);
    // The members are named after the nodes' hostnames (each its own, derived from its identity).
    hostnames = rows(m.stdout).map((r) => r[2]!).sort();
    expect(new Set(hostnames).size).toBe(2);
    expect(rows(m.stdout).map((r) => r[3]).sort()).toEqual([`https://${IPS[0]}:2380`, `https://${IPS[1]}:2380`]);
    // cp2's console: it added itself as a learner, then was promoted (no command of its own).
    await vms[1]!.waitFor(/etcd: added this node as learner/, 30_000);
    await vms[1]!.waitFor(/etcd: promoted learner/, 30_000);
    const via2 = await until(['-n', IPS[1]!, 'etcd', 'members'], config, promoted, 60_000);
    expect(rows(via2.stdout).map((r) => r[2]).sort()).toEqual(hostnames);
    // etcd's own log, through the API: its data is on /var (EPHEMERAL).
    const logs = await bronzectl(['-n', IPS[0]!, 'logs', 'etcd'], { config });
    expect(logs.stdout).toMatch(/data dir = \/var\/lib\/etcd/);
    // A second bootstrap is refused, on either node.
    for (const ip of IPS) {
      const again = await bronzectl(['-n', ip, 'bootstrap'], { config });
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/etcd data directory is not empty/);
    }
  }, 330_000);

  it('both nodes see both Member resources, and health passes', async () => {
    const both = (x: CliResult) => x.code === 0 && hostnames.every((h) => new RegExp(`Member\\s+${h}\\s`).test(x.stdout));
    for (const ip of IPS) {
      const r = await until(['-n', ip, 'get', 'members'], config, both, 60_000);
      expect(both(r), r.stdout + r.stderr).toBe(true);
      for (const other of IPS) expect(r.stdout).toMatch(new RegExp(`Member\\s+bronze-\\S+\\s+\\d+\\s+bronze-\\S+\\s+controlplane\\s+Bronze \\(v[^)]+\\)\\s+\\[.*"${other.replace(/\./g, '\\.')}".*\\]`));
    }
    const h = await bronzectl(['health', '--control-plane-nodes', IPS.join(','), '--wait-timeout', '2m'], { config, timeoutMs: 150_000 });
    expect(h.stderr).toBe('');
    expect(h.code).toBe(0);
    expect(h.stdout).toContain('waiting for etcd members to be control plane nodes: OK');
  }, 200_000);

  it('with two voters, a reboot of either is refused for quorum', async () => {
    for (const ip of IPS) {
      const r = await bronzectl(['-n', ip, 'reboot'], { config });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/reboot would break etcd quorum: 1 of the other 1 voting member is healthy, 2 of 2 must stay up/);
    }
  });
});
