// End-to-end: containers on one node (issue 45), under QEMU/TCG, on one boot of the image's disk
// and one reboot. A registry on the host (Debian's docker-registry, on loopback; the node reaches
// it as QEMU's user-network host 10.0.2.2, over plain HTTP through a `machine.registries` mirror)
// serves a busybox image the test builds (test/fixtures/busybox-image.ts).
//   1. apply-config (maintenance mode) with a ContainerConfig running busybox httpd on the host
//      network with a memory limit: the image is pulled, the instance runs, its page answers
//      through a forwarded port; `logs`, `stats`, `containers`, `cgroups` show it.
//   2. `restart` makes a new instance; a process killed inside it (a CGI that kills httpd) ends
//      the task, and the node starts it again; a changed document replaces it.
//   3. A second container that allocates without limit dies inside its own cgroup (OOM) while
//      `version` keeps answering; a third, restricted, cannot mknod or write its root.
//   4. Bad input: a malformed document, a name that is a Bronze service, a host path outside
//      what is allowed, an unknown image: refused or reported, nothing else changes.
//   5. `image import` of an archive runs a container with no registry involved.
//   6. The registry stopped, the node rebooted: the container runs again from the node's store.
//   7. An upgrade (keeping EPHEMERAL) commits the new slot only once the declared container is
//      healthy there; with its probe failing, the next upgrade's trial is given up and the node
//      is back on the old slot.
//   8. The documents removed: nothing runs, no cgroup is left.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QemuVM } from '../../image-builder/qemu.ts';
import { connect } from '../../src/client/index.ts';
import { load, newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { RESOURCE_DEFINITIONS } from '../../src/contract/resources/registry.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { bronzectl, bronzectlUntilOk, until } from '../lib/bronzectl.ts';
import { consoleFile } from '../lib/console-log.ts';
import { freePort } from '../lib/ports.ts';
import { strictDecode } from '../lib/proto-strict.ts';
import { buildBusyboxImage, pushImage, writeOciArchive } from '../fixtures/busybox-image.ts';
import { type RegistryDaemon, startRegistry } from '../fixtures/registry.ts';

const DISK = '_out/amd64/disk.raw';
const NEXT = '_out/test-images/amd64/next/upgrade.tar';
const BOOT = 300_000;
const NS = ['--namespace', 'taloscontainers'];

/** The httpd container: its page, and a CGI that kills httpd (the task's other process). */
const WWW = {
  'www/index.html': 'hello from a bronze container\n',
  'www/cgi-bin/crash': '#!/bin/sh\necho "Content-Type: text/plain"\necho\necho bye\nkill -9 $(cat /tmp/httpd.pid)\n',
};
// sh is the container's PID 1: it ends httpd and itself on SIGTERM (a PID 1 without a handler
// ignores it, and the stop would wait out its grace period).
const HTTPD = ['/bin/sh', '-c', 'httpd -f -vv -p 8080 -h /www & pid=$!; echo $pid > /tmp/httpd.pid; trap "kill $pid; exit 0" TERM; wait $pid'];
const TMP = [{ tmpfs: { destination: '/tmp', size: '4MiB' } }];
const WEB = { entrypoint: HTTPD, network: { mode: 'host' }, mounts: TMP, resources: { limits: { memory: '48MiB', cpu: '500m' } } };

describe('workloads: containers from ContainerConfig on one node', () => {
  let dir: string;
  let disk: string;
  let config: string;
  let target: string;
  let httpPort: number;
  let registry: RegistryDaemon | undefined;
  let vm: QemuVM | undefined;
  let image: string;
  let baseDocs: string;
  const ctl = (args: string[], timeoutMs = 120_000) => bronzectl(args, { config, timeoutMs });
  const status = async (name: string) => {
    const r = await ctl(['get', 'containerstatus', name, '-o', 'json']);
    return r.code === 0 ? (JSON.parse(r.stdout).spec as { phase: string; pid: number; starts: number; exitCode?: number; message?: string; healthy?: boolean }) : undefined;
  };
  const waitStatus = (name: string, ok: (s: NonNullable<Awaited<ReturnType<typeof status>>>) => boolean, timeoutMs = 180_000) =>
    until(`container ${name}`, () => ctl(['get', 'containerstatus', name, '-o', 'json']), (r) => r.code === 0 && ok(JSON.parse(r.stdout).spec), timeoutMs).then((r) => JSON.parse(r.stdout).spec);
  const get = (p: string) => fetch(`http://127.0.0.1:${httpPort}${p}`, { signal: AbortSignal.timeout(10_000) }).then(async (r) => ({ status: r.status, body: await r.text() }));
  const container = (name: string, over: Record<string, unknown>) => stringify({ apiVersion: 'v1alpha1', kind: 'ContainerConfig', name, image, ...over });
  const apply = async (docs: string[]) => {
    const file = path.join(dir, `cfg-${Date.now()}.yaml`);
    fs.writeFileSync(file, [baseDocs, ...docs].join('---\n'));
    return ctl(['apply-config', '-f', file]);
  };

  beforeAll(async () => {
    if (!fs.existsSync(DISK)) throw new Error(`${DISK} is missing: run \`make image\` first`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-workloads-'));
    disk = path.join(dir, 'disk.raw');
    execFileSync('cp', ['--sparse=always', DISK, disk]);
    registry = await startRegistry();
    const img = await buildBusyboxImage({ files: WWW });
    await pushImage(img, registry.url, 'bronze/busybox', '1');
    const regHost = `10.0.2.2:${registry.host.split(':')[1]}`;
    image = `${regHost}/bronze/busybox:1`;
    const imported = await buildBusyboxImage({ files: { 'marker.txt': 'imported without a registry\n' } });
    await writeOciArchive(imported, path.join(dir, 'imported.tar'), 'bronze.test/imported:1');
    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'work', endpoint: 'https://10.0.2.15:6443', additionalSANs: ['127.0.0.1'], secrets, installDisk: '/dev/vda' });
    const doc = parse(cfg.controlplane);
    doc.machine.registries = { mirrors: { [regHost]: { endpoints: [`http://${regHost}`] } } };
    baseDocs = stringify(doc);
    const port = await freePort();
    httpPort = await freePort();
    target = `127.0.0.1:${port}`;
    config = path.join(dir, 'bronzeconfig');
    await save(config, await newClientConfig({ contextName: 'work', endpoints: [target], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
    vm = new QemuVM({ apiPort: port, boot: { kind: 'disk', path: disk }, forwards: [{ host: httpPort, guest: 8080 }] }, consoleFile('workloads')).start();
    await vm.waitFor(/maintenance mode: no machine configuration/, BOOT);
  }, BOOT + 60_000);

  afterAll(async () => {
    vm?.kill();
    await registry?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('pulls the image and runs httpd with a memory limit, without a reboot; logs, stats, containers and cgroups show it', async () => {
    const file = path.join(dir, 'first.yaml');
    fs.writeFileSync(file, [baseDocs, container('web', WEB)].join('---\n'));
    await bronzectlUntilOk(['version', '--insecure', '-n', target], { timeoutMs: 120_000 });
    const r = await bronzectl(['apply-config', '--insecure', '-n', target, '-f', file]);
    expect(r.code, r.stderr).toBe(0);
    await bronzectlUntilOk(['version'], { config, timeoutMs: 120_000 });
    const s = await waitStatus('web', (x) => x.phase === 'running');
    expect(s.pid).toBeGreaterThan(0);
    const img = await ctl(['get', 'containerimagestatus', 'web', '-o', 'json']);
    expect(JSON.parse(img.stdout).spec).toMatchObject({ phase: 'ready', image });
    expect((await ctl(['get', 'containerspecs'])).stdout).toMatch(/web/);
    const page = await until('page', async () => get('/index.html').then((x) => ({ code: x.status === 200 ? 0 : 1, stdout: x.body, stderr: '' }), (e: Error) => ({ code: 1, stdout: '', stderr: e.message })), (x) => x.code === 0, 60_000);
    expect(page.stdout).toBe('hello from a bronze container\n');
    const logs = await until('logs', () => ctl(['logs', 'web', ...NS]), (x) => /GET \/index\.html|index\.html/.test(x.stdout), 30_000);
    expect(logs.code, logs.stderr).toBe(0);
    const ps = await ctl(['containers', ...NS]);
    expect(ps.stdout).toMatch(new RegExp(`web\\s+.*${image.replace(/[.]/g, '\\.')}`));
    const stats = await ctl(['stats', ...NS]);
    expect(stats.code, stats.stderr).toBe(0);
    const mem = /web\s+.*?(\d+(?:\.\d+)?)\s*(?:[KMG]i?B|B)?/.exec(stats.stdout);
    expect(mem, stats.stdout).not.toBeNull();
    const cg = await ctl(['cgroups']);
    expect(cg.code, cg.stderr).toBe(0);
    expect(cg.stdout).toMatch(/web/);
    expect(cg.stdout).toMatch(/apid/);
    // The containers' resources on Talos's wire, read strictly with the copies of Talos's
    // messages (api.test.ts does it for every other type, on a node without containers).
    const cfg = await load(config);
    const c = cfg.contexts[cfg.context]!;
    const client = connect({ endpoints: c.endpoints, ca: c.ca, crt: c.crt, key: c.key });
    try {
      for (const def of RESOURCE_DEFINITIONS.filter((d) => d.defaultNamespace === 'containers')) {
        let n = 0;
        for await (const res of client.state.list(def.defaultNamespace, def.type)) {
          n++;
          expect(() => strictDecode(def.proto!.message, res.spec!.proto_spec), `${def.type}/${res.metadata!.id}`).not.toThrow();
        }
        expect(n, def.type).toBeGreaterThan(0);
      }
    } finally {
      client.close();
    }
  }, 600_000);

  it('restart makes a new instance; a killed process comes back; a changed document replaces the instance', async () => {
    const before = (await status('web'))!;
    const r = await ctl(['restart', 'web', ...NS]);
    expect(r.code, r.stderr).toBe(0);
    const restarted = await waitStatus('web', (x) => x.phase === 'running' && x.pid !== before.pid, 60_000);
    expect(restarted.pid).not.toBe(before.pid);
    // The CGI kills httpd: the task ends, and 5 s later the node starts it again.
    await get('/cgi-bin/crash').catch(() => undefined);
    const back = await waitStatus('web', (x) => x.phase === 'running' && x.pid !== restarted.pid && x.starts > restarted.starts, 90_000);
    expect(back.starts).toBeGreaterThan(restarted.starts);
    expect((await get('/index.html')).body).toBe('hello from a bronze container\n');
    // A changed document (another environment): another instance, same page.
    const a = await apply([container('web', { ...WEB, environment: ['CHANGED=1'] })]);
    expect(a.code, a.stderr).toBe(0);
    const replaced = await waitStatus('web', (x) => x.phase === 'running' && x.pid !== back.pid, 90_000);
    expect(replaced.pid).not.toBe(back.pid);
    expect((await ctl(['get', 'containerinstancespecs'])).stdout).toMatch(/web-\d+/);
  }, 400_000);

  it('an unlimited allocator dies inside its cgroup while the API answers; a restricted container cannot mknod or write its root', async () => {
    const web = container('web', { ...WEB, environment: ['CHANGED=1'] });
    const hog = container('hog', { entrypoint: ['/bin/sh', '-c', 'x=0123456789abcdef; while true; do x=$x$x; done'], resources: { limits: { memory: '24MiB' } } });
    const probe = container('probe', {
      entrypoint: ['/bin/sh', '-c', 'mknod /tmp/null c 1 3 2>/dev/null && echo MKNOD=allowed || echo MKNOD=denied; touch /rootfs-write 2>/dev/null && echo ROOT=writable || echo ROOT=readonly; trap "exit 0" TERM; sleep 100000 & wait'],
      mounts: TMP,
    });
    const a = await apply([web, hog, probe]);
    expect(a.code, a.stderr).toBe(0);
    // Killed by the kernel inside its own cgroup (memory.events counts it there), then started again.
    const hogged = await waitStatus('hog', (x) => x.exitCode === 137, 180_000);
    expect(hogged.exitCode).toBe(137);
    const events = await ctl(['read', '/sys/fs/cgroup/taloscontainers/hog/memory.events']);
    expect(events.code, events.stderr).toBe(0);
    expect(Number(/^oom_kill (\d+)$/m.exec(events.stdout)?.[1])).toBeGreaterThanOrEqual(1);
    await waitStatus('hog', (x) => (x.starts ?? 0) >= 2, 60_000);
    const v = await ctl(['version'], 30_000);
    expect(v.code, v.stderr).toBe(0);
    expect((await status('web'))?.phase).toBe('running');
    const out = await until('probe logs', () => ctl(['logs', 'probe', ...NS]), (x) => /ROOT=/.test(x.stdout), 120_000);
    expect(out.stdout).toMatch(/MKNOD=denied/);
    expect(out.stdout).toMatch(/ROOT=readonly/);
  }, 400_000);

  it('refuses bad documents with a clear error and changes nothing; an unknown image shows in its status', async () => {
    const web = container('web', { ...WEB, environment: ['CHANGED=1'] });
    const pid = (await status('web'))!.pid;
    const bad = [
      [container('Bad_Name', {}), /name/],
      [container('apid', {}), /apid/],
      [container('escape', { mounts: [{ hostPath: { source: '/system/state', destination: '/s' } }] }), /\/system\/state/],
      [container('nolimits', { resources: { limits: { memory: 'lots' } } }), /memory/],
    ] as const;
    for (const [doc, why] of bad) {
      const r = await apply([web, doc]);
      expect(r.code, doc).not.toBe(0);
      expect(r.stderr).toMatch(why);
      expect(r.stderr).toMatch(/line \d+/);
    }
    expect((await status('web'))?.pid).toBe(pid);
    const a = await apply([web, container('ghost', { image: image.replace('bronze/busybox:1', 'bronze/nothing:1') })]);
    expect(a.code, a.stderr).toBe(0);
    const st = await until('image status', () => ctl(['get', 'containerimagestatus', 'ghost', '-o', 'json']), (x) => x.code === 0 && JSON.parse(x.stdout).spec.phase === 'failed', 120_000);
    expect(JSON.parse(st.stdout).spec.error).toMatch(/not found/);
    expect((await status('web'))?.pid).toBe(pid);
  }, 300_000);

  it('image import runs a container with no registry; after a reboot with the registry stopped, the containers run from the store', async () => {
    // The image commands' namespace is talosctl's: cri (the default) is where containers' images live.
    const imp = await ctl(['image', 'import', path.join(dir, 'imported.tar')], 300_000);
    expect(imp.code, imp.stderr).toBe(0);
    expect((await ctl(['image', 'list'])).stdout).toMatch(/bronze\.test\/imported:1/);
    const web = container('web', { ...WEB, environment: ['CHANGED=1'] });
    const local = stringify({ apiVersion: 'v1alpha1', kind: 'ContainerConfig', name: 'local', image: 'bronze.test/imported:1', entrypoint: ['/bin/sh', '-c', 'cat /marker.txt; trap "exit 0" TERM; sleep 100000 & wait'] });
    const a = await apply([web, local]);
    expect(a.code, a.stderr).toBe(0);
    await waitStatus('local', (x) => x.phase === 'running', 120_000);
    expect((await until('local logs', () => ctl(['logs', 'local', ...NS]), (x) => /imported without a registry/.test(x.stdout), 60_000)).code).toBe(0);
    await registry!.stop();
    registry = undefined;
    const from = vm!.lines.length;
    const r = await ctl(['reboot']);
    expect(r.code, r.stderr).toBe(0);
    await vm!.waitFor(/all \d+ services Running/, BOOT, from);
    await waitStatus('web', (x) => x.phase === 'running', 180_000);
    await waitStatus('local', (x) => x.phase === 'running', 60_000);
    expect((await get('/index.html')).body).toBe('hello from a bronze container\n');
  }, BOOT + 300_000);

  it('an upgrade commits once the declared containers are healthy again; with one unhealthy, it rolls back', async () => {
    if (!fs.existsSync(NEXT)) throw new Error(`${NEXT} is missing: run \`make test-images\` first`);
    const web = container('web', { ...WEB, environment: ['CHANGED=1'] });
    const healthy = stringify({ apiVersion: 'v1alpha1', kind: 'ContainerHealthConfig', name: 'web', tcpSocket: { port: 8080 }, periodSeconds: 2, failureThreshold: 3 });
    expect((await apply([web, healthy])).code).toBe(0);
    await waitStatus('web', (x) => x.phase === 'running' && x.healthy === true, 120_000);
    // --preserve: EPHEMERAL, where the images are, stays; the new slot starts web from the store.
    const from = vm!.lines.length;
    const up = await ctl(['upgrade', '--image', NEXT, '--preserve', '--wait', '--timeout', '8m'], 600_000);
    expect(up.code, up.stderr).toBe(0);
    const booted = await vm!.waitFor(/bronze: booting slot B|bronze: trying slot B/, BOOT, from);
    const commit = await vm!.waitFor(/commit: slot B reached Running/, BOOT, booted);
    const healthyAt = vm!.lines.findIndex((l, i) => i > booted && /container web: healthy/.test(l));
    expect(healthyAt, 'web was healthy on slot B before the commit').toBeGreaterThan(booted);
    expect(healthyAt).toBeLessThan(commit);
    expect(JSON.parse((await ctl(['get', 'bootstatus', '-o', 'json'])).stdout).spec).toMatchObject({ booted: 'B', default: 'B', upgrade: { state: 'committed' } });

    // The probe now asks for a page httpd does not have: web goes unhealthy, and an upgrade to
    // slot A is given up as soon as the probe has failed its threshold there.
    const unhealthy = stringify({ apiVersion: 'v1alpha1', kind: 'ContainerHealthConfig', name: 'web', httpGet: { port: 8080, path: '/missing' }, periodSeconds: 2, failureThreshold: 3 });
    expect((await apply([web, unhealthy])).code).toBe(0);
    const again = vm!.lines.length;
    const r = await ctl(['upgrade', '--image', NEXT, '--preserve'], 600_000);
    expect(r.code, r.stderr).toBe(0);
    const tried = await vm!.waitFor(/bronze: trying slot A/, BOOT, again);
    const given = await vm!.waitFor(/slot A on trial is given up: container web is unhealthy/, BOOT, tried);
    await vm!.waitFor(/bronze: booting slot B/, BOOT, given);
    await vm!.waitFor(/all \d+ services Running/, BOOT, given);
    const st = await until('boot status', () => ctl(['get', 'bootstatus', '-o', 'json']), (x) => x.code === 0, 60_000);
    expect(JSON.parse(st.stdout).spec).toMatchObject({ booted: 'B', default: 'B', upgrade: { state: 'failed' } });
  }, 3 * BOOT);

  it('removing the documents leaves nothing running and no cgroup behind', async () => {
    const a = await apply([]);
    expect(a.code, a.stderr).toBe(0);
    await until('no containers', () => ctl(['containers', ...NS]), (x) => x.code === 0 && !/web|local/.test(x.stdout), 120_000);
    expect((await ctl(['get', 'containerstatuses'])).stdout).not.toMatch(/web|local/);
    const cg = await ctl(['cgroups']);
    expect(cg.stdout).not.toMatch(/\bweb\b|\blocal\b/);
  }, 200_000);
});
