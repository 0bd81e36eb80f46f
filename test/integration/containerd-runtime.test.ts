// The container runtime (src/containerd/runtime.ts) against a real containerd 1.6 and runc 1.1,
// started by the test as root with its own root, state and socket: busybox httpd on the host
// network serves a file, its log and cgroup figures show, a restart makes a new instance, a
// killed process is reported, a changed run spec replaces the container, the restricted profile
// cannot mknod or write its rootfs, and a removed container leaves no task, container,
// snapshot, cgroup or mount behind.
//
// The image is made by hand (a snapshot holding a static busybox, committed under a made-up chain
// id), so the runtime is tested without the image store. The host runs cgroup v1 (hybrid), so
// containerd and runc use v1 here; the node uses v2: what differs is the cgroup files, not the flow.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContainerdClient, connectContainerd, isNotFound } from '../../src/containerd/client.ts';
import { ContainerRuntime, SNAPSHOTS, SNAPSHOTTER, CONTAINERS, type InstanceExit } from '../../src/containerd/runtime.ts';
import type { ContainerRunSpec } from '../../src/containerd/types.ts';
import { pullImage } from '../../src/containerd/pull.ts';
import { buildBusyboxImage, pushImage } from '../fixtures/busybox-image.ts';
import { type ContainerdDaemon, haveContainerd, startContainerd } from '../fixtures/containerd.ts';
import { haveRegistry, startRegistry } from '../fixtures/registry.ts';
import { freePort } from '../lib/ports.ts';

const BUSYBOX = '/bin/busybox';
const haveRunc = fs.existsSync('/usr/sbin/runc') || fs.existsSync('/usr/bin/runc');
const canRun = haveContainerd && haveRunc && fs.existsSync(BUSYBOX);
// Unique per run: the runc shim keeps runc's state under /run/containerd/runc/<namespace>/<id>
// whatever containerd's own state dir, so two runs of this test at once would collide.
const NS = `bronze-rt-test-${process.pid}`;
const CHAIN_ID = 'sha256:' + 'b'.repeat(64);
const APPLETS = ['sh', 'httpd', 'mknod', 'touch', 'sleep', 'cat', 'echo', 'ls', 'true'];

/** A committed snapshot holding busybox and a web root: the image's top layer, by hand. */
async function makeBaseSnapshot(c: ContainerdClient): Promise<void> {
  const key = 'extract-busybox';
  // Without an image or a lease referencing them, containerd's garbage collector takes snapshots
  // at its next run: the gc.root label keeps both the one being filled and the committed layer.
  const labels = { 'containerd.io/gc.root': new Date().toISOString() };
  const { mounts } = await c.unary<{ mounts: { type: string; source: string; options: string[] }[] }>(SNAPSHOTS, 'Prepare', { snapshotter: SNAPSHOTTER, key, parent: '', labels }, NS);
  // A snapshot without a parent is a plain directory, bind-mounted: write into it directly.
  const m = mounts[0]!;
  expect(m.type).toBe('bind');
  const root = m.source;
  for (const d of ['bin', 'etc', 'tmp', 'www', 'proc', 'sys', 'dev', 'run']) fs.mkdirSync(path.join(root, d), { recursive: true });
  fs.copyFileSync(BUSYBOX, path.join(root, 'bin/busybox'));
  fs.chmodSync(path.join(root, 'bin/busybox'), 0o755);
  for (const a of APPLETS) fs.symlinkSync('busybox', path.join(root, 'bin', a));
  fs.writeFileSync(path.join(root, 'www/index.html'), 'hello from bronze\n');
  fs.writeFileSync(path.join(root, 'etc/passwd'), 'root:x:0:0:root:/:/bin/sh\n');
  fs.chmodSync(path.join(root, 'tmp'), 0o1777);
  await c.unary(SNAPSHOTS, 'Commit', { snapshotter: SNAPSHOTTER, name: CHAIN_ID, key, labels }, NS);
}

function runSpec(over: Partial<ContainerRunSpec> & { name: string }): ContainerRunSpec {
  return { image: 'test/busybox:1', environment: [], mounts: [], profile: 'restricted', capabilities: { add: [], drop: [] }, network: 'none', limits: {}, ...over };
}

async function until<T>(fn: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function fetchText(url: string): Promise<string> {
  return until(async () => {
    try {
      const res = await fetch(url);
      return res.ok ? await res.text() : undefined;
    } catch {
      return undefined;
    }
  }, `GET ${url}`);
}

describe.skipIf(!canRun)('containerd runtime (real containerd + runc, root)', () => {
  let d: ContainerdDaemon;
  let c: ContainerdClient;
  let rt: ContainerRuntime;
  let logDir: string;
  let etcDir: string;
  const exits: InstanceExit[] = [];
  const cgroupParent = `/bronze-rt-test-${process.pid}`;

  beforeAll(async () => {
    d = await startContainerd();
    c = connectContainerd(d.socket);
    logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-rt-logs-'));
    // Stands in for networkd's /system/etc; runDir below holds the copies containers see.
    etcDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-rt-etc-'));
    fs.writeFileSync(path.join(etcDir, 'resolv.conf'), 'nameserver 192.0.2.53\n');
    fs.writeFileSync(path.join(etcDir, 'hosts'), '127.0.0.1 localhost\n');
    await makeBaseSnapshot(c);
    rt = new ContainerRuntime({
      client: c,
      namespace: NS,
      logDir,
      etcDir,
      runDir: path.join(logDir, 'run'),
      cgroupParent,
      stopGraceMs: 2000,
      images: async (_ns, ref) => {
        if (ref !== 'test/busybox:1') throw new Error(`unknown image ${ref}`);
        return { config: { Env: ['PATH=/bin'], Cmd: ['/bin/sh'] }, chainId: CHAIN_ID };
      },
      onExit: (e) => exits.push(e),
    });
  }, 30_000);

  afterAll(async () => {
    try {
      if (rt) {
        // Every container goes before containerd, or their shims outlive it.
        for (const info of await rt.listContainers(NS).catch(() => [])) await rt.remove(info.id, NS).catch(() => {});
        rt.close();
      }
      c?.close();
      await d?.stop();
    } finally {
      for (const dir of [logDir, etcDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
      for (const dir of [...(fs.existsSync('/sys/fs/cgroup') ? fs.readdirSync('/sys/fs/cgroup').map((h) => path.join('/sys/fs/cgroup', h, cgroupParent)) : []), `/run/containerd/runc/${NS}`]) {
        try {
          fs.rmdirSync(dir);
        } catch {
          // not there, or not a hierarchy
        }
      }
    }
  }, 60_000);

  const exitOf = (id: string, after: number) => until(() => exits.slice(after).find((e) => e.id === id), `exit of ${id}`);
  const logOf = async (id: string) => {
    let s = '';
    for await (const b of rt.logs(NS, id, { follow: false, tailLines: -1 })) s += Buffer.from(b).toString();
    return s;
  };

  let port = 0;
  const web = () =>
    runSpec({
      name: 'web',
      entrypoint: ['/bin/sh', '-c', `echo web starting; exec httpd -f -v -p 127.0.0.1:${port} -h /www`],
      network: 'host',
      limits: { memoryBytes: 64 * 1024 * 1024, cpuMillis: 500 },
    });

  it('runs busybox httpd on the host network and serves a file', async () => {
    port = await freePort();
    const r = await rt.ensureRunning(web());
    expect(r.created).toBe(true);
    expect(r.pid).toBeGreaterThan(0);
    expect(await fetchText(`http://127.0.0.1:${port}/index.html`)).toBe('hello from bronze\n');
    const again = await rt.ensureRunning(web());
    expect(again).toEqual({ pid: r.pid, created: false, started: false });
  }, 30_000);

  it('lists it running, with its log and non-zero stats', async () => {
    const list = await rt.listContainers(NS);
    const info = list.find((i) => i.id === 'web')!;
    expect(info).toMatchObject({ status: 'running', image: 'test/busybox:1', cgroup: `${cgroupParent}/web` });
    expect(info.pid).toBeGreaterThan(0);
    expect(info.labels['bronze.dev/spec-hash']).toMatch(/^[0-9a-f]{64}$/);
    await until(async () => (await logOf('web')).includes('web starting'), 'the log');
    // busybox httpd -v logs each request (`127.0.0.1:PORT: response:200`) to stderr, which goes to the same file.
    await until(async () => (await logOf('web')).includes('response:200'), 'the request in the log');
    const stats = await rt.stats(NS);
    const s = stats.find((x) => x.id === 'web')!;
    expect(s.memoryUsage).toBeGreaterThan(0);
    expect(s.cpuUsageNanos).toBeGreaterThan(0);
    // The limits reached the cgroup (v1 here: memory.limit_in_bytes, cpu.cfs_quota_us).
    const memLimit = `/sys/fs/cgroup/memory${cgroupParent}/web/memory.limit_in_bytes`;
    if (fs.existsSync(memLimit)) expect(fs.readFileSync(memLimit, 'utf8').trim()).toBe(String(64 * 1024 * 1024));
    const quota = `/sys/fs/cgroup/cpu${cgroupParent}/web/cpu.cfs_quota_us`;
    if (fs.existsSync(quota)) expect(fs.readFileSync(quota, 'utf8').trim()).toBe('50000');
  }, 30_000);

  it('follows the log', async () => {
    const ac = new AbortController();
    let got = '';
    const reading = (async () => {
      for await (const b of rt.logs(NS, 'web', { follow: true, tailLines: 0, signal: ac.signal })) {
        got += Buffer.from(b).toString();
        if (got.includes('response:404')) ac.abort();
      }
    })();
    await fetch(`http://127.0.0.1:${port}/followed`).catch(() => {});
    await until(() => got.includes('response:404') || undefined, 'the followed line');
    ac.abort();
    await reading;
  }, 20_000);

  it('restart makes a new instance', async () => {
    const before = (await rt.listContainers(NS)).find((i) => i.id === 'web')!.pid;
    const n = exits.length;
    await rt.restart(NS, 'web');
    const after = (await rt.listContainers(NS)).find((i) => i.id === 'web')!;
    expect(after.status).toBe('running');
    expect(after.pid).not.toBe(before);
    const e = await exitOf('web', n);
    expect(e).toMatchObject({ pid: before, expected: true });
    expect(await fetchText(`http://127.0.0.1:${port}/index.html`)).toBe('hello from bronze\n');
  }, 30_000);

  it('reports a killed process, and ensureRunning brings it back', async () => {
    const { pid } = (await rt.listContainers(NS)).find((i) => i.id === 'web')!;
    const n = exits.length;
    // A pid of 0 or 1 would signal this process group or init: only a real task's pid.
    expect(pid).toBeGreaterThan(1);
    expect(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toContain('httpd');
    process.kill(pid, 'SIGKILL');
    const e = await exitOf('web', n);
    expect(e).toMatchObject({ namespace: NS, id: 'web', pid, exitStatus: 137, expected: false });
    const r = await rt.ensureRunning(web());
    expect(r).toMatchObject({ created: false, started: true });
    expect(r.pid).not.toBe(pid);
    expect(await fetchText(`http://127.0.0.1:${port}/index.html`)).toBe('hello from bronze\n');
  }, 30_000);

  it('a runtime started later adopts the running task and sees its exit', async () => {
    const seen: InstanceExit[] = [];
    const rt2 = new ContainerRuntime({ client: c, namespace: NS, logDir, cgroupParent, images: async () => Promise.reject(new Error('unused')), onExit: (e) => seen.push(e) });
    try {
      expect(await rt2.adopt(NS)).toEqual(['web']);
      const { pid } = (await rt.listContainers(NS)).find((i) => i.id === 'web')!;
      expect(pid).toBeGreaterThan(1);
      process.kill(pid, 'SIGKILL');
      const e = await until(() => seen.find((x) => x.id === 'web'), 'the adopted exit');
      expect(e).toMatchObject({ pid, exitStatus: 137, expected: false });
    } finally {
      rt2.close();
    }
    await rt.ensureRunning(web());
  }, 30_000);

  it('a changed run spec replaces the container', async () => {
    const old = (await rt.listContainers(NS)).find((i) => i.id === 'web')!;
    const changed = { ...web(), environment: ['CHANGED=1'] };
    const r = await rt.ensureRunning(changed);
    expect(r.created).toBe(true);
    const now = (await rt.listContainers(NS)).find((i) => i.id === 'web')!;
    expect(now.labels['bronze.dev/spec-hash']).not.toBe(old.labels['bronze.dev/spec-hash']);
    expect(await fetchText(`http://127.0.0.1:${port}/index.html`)).toBe('hello from bronze\n');
  }, 30_000);

  it('a host-network container reads the node\'s resolv.conf and hosts, as they are at its start', async () => {
    const n = exits.length;
    await rt.ensureRunning(runSpec({ name: 'dns', network: 'host', entrypoint: ['/bin/sh', '-c', 'cat /etc/resolv.conf /etc/hosts'] }));
    expect((await exitOf('dns', n)).exitStatus).toBe(0);
    expect(await logOf('dns')).toBe('nameserver 192.0.2.53\n127.0.0.1 localhost\n');
    fs.writeFileSync(path.join(etcDir, 'resolv.conf'), 'nameserver 192.0.2.54\n');
    const m = exits.length;
    await rt.restart(NS, 'dns');
    await exitOf('dns', m);
    expect(await logOf('dns')).toContain('nameserver 192.0.2.54\n');
    expect(await rt.remove('dns', NS)).toBe(true);
    expect(fs.existsSync(path.join(logDir, 'run', NS, 'dns'))).toBe(false);
  }, 30_000);

  it('restricted cannot mknod or write its rootfs; privileged can', async () => {
    const script = 'mknod /tmp/null c 1 3 && echo mknod=ok || echo mknod=refused; touch /probe && echo write=ok || echo write=refused; cat /proc/net/dev';
    const probe = (name: string, profile: 'restricted' | 'privileged') =>
      runSpec({ name, profile, entrypoint: ['/bin/sh', '-c', script], mounts: [{ type: 'tmpfs', destination: '/tmp', options: ['size=1m'] }] });
    try {
      await probes();
    } finally {
      // Whatever failed, the later cases start from a namespace without the probes.
      for (const id of ['probe-r', 'probe-p']) await rt.remove(id, NS).catch(() => false);
    }
    async function probes() {
      for (const [name, profile] of [['probe-r', 'restricted'], ['probe-p', 'privileged']] as const) {
        const n = exits.length;
        await rt.ensureRunning(probe(name, profile));
        const e = await exitOf(name, n);
        expect(e.exitStatus).toBe(0);
      }
      // stderr is copied by its own goroutine in the shim and may land a moment after the exit.
      const r = await until(async () => {
        const log = await logOf('probe-r');
        return log.includes('Read-only file system') && log.includes('Operation not permitted') ? log : undefined;
        // A busy host (a kernel build beside the suite) has delayed it by more than 5 s.
      }, 'the probe\'s errors in its log', 20_000).catch(async () => logOf('probe-r'));
      expect(r).toContain('mknod=refused');
      expect(r).toContain('Operation not permitted');
      expect(r).toContain('write=refused');
      expect(r).toContain('Read-only file system');
      // network: none is a namespace of its own with only the loopback.
      const ifaces = r.split('\n').filter((l) => /^\s*[\w.-]+:\s+\d+\s+\d+/.test(l)).map((l) => l.trim().split(':')[0]);
      expect(ifaces).toEqual(['lo']);
      const p = await logOf('probe-p');
      expect(p).toContain('mknod=ok');
      expect(p).toContain('write=ok');
      for (const id of ['probe-r', 'probe-p']) expect(await rt.remove(id, NS)).toBe(true);
    }
  }, 60_000);

  it('remove leaves no task, container, snapshot, cgroup or mount', async () => {
    const { pid } = (await rt.listContainers(NS)).find((i) => i.id === 'web')!;
    expect(await rt.remove('web', NS)).toBe(true);
    expect(await rt.remove('web', NS)).toBe(false);
    expect((await rt.listContainers(NS)).map((i) => i.id)).toEqual([]);
    const { tasks } = await c.unary<{ tasks: unknown[] }>('containerd.services.tasks.v1.Tasks', 'List', { filter: '' }, NS);
    expect(tasks).toEqual([]);
    await expect(c.unary(CONTAINERS, 'Get', { id: 'web' }, NS)).rejects.toSatisfy(isNotFound);
    await expect(c.unary(SNAPSHOTS, 'Stat', { snapshotter: SNAPSHOTTER, key: 'web' }, NS)).rejects.toSatisfy(isNotFound);
    expect(fs.existsSync(`/proc/${pid}`)).toBe(false);
    for (const h of ['memory', 'pids', 'cpu', 'devices']) expect(fs.existsSync(`/sys/fs/cgroup/${h}${cgroupParent}/web`)).toBe(false);
    const mounts = fs.readFileSync('/proc/self/mountinfo', 'utf8');
    expect(mounts).not.toContain(`${NS}/web`);
    expect(mounts).not.toContain(d.dir);
    // The image's layer stays: it is the image's, not the container's.
    await c.unary(SNAPSHOTS, 'Stat', { snapshotter: SNAPSHOTTER, key: CHAIN_ID }, NS);
  }, 30_000);

  it.skipIf(!haveRegistry)('runs an image pulled from a registry, its config and layer from the image store', async () => {
    const reg = await startRegistry();
    const rt2 = new ContainerRuntime({ client: c, namespace: NS, logDir, cgroupParent, stopGraceMs: 1000 });
    try {
      const p = await freePort();
      const img = await buildBusyboxImage({ files: { 'www/index.html': 'pulled\n' }, env: ['PATH=/bin'], cmd: ['httpd', '-f', '-p', `127.0.0.1:${p}`, '-h', '/www'] });
      await pushImage(img, reg.url, 'busybox', '1');
      const ref = `${reg.host}/busybox:1`;
      await pullImage(c, NS, ref, { registries: { [reg.host]: { endpoints: [`http://${reg.host}`] } } });
      // The default image source: the image store's run config and chain id (images.ts imageRunConfig).
      await rt2.ensureRunning(runSpec({ name: 'pulled', image: ref, network: 'host' }));
      expect(await fetchText(`http://127.0.0.1:${p}/index.html`)).toBe('pulled\n');
      expect(await rt2.remove('pulled', NS)).toBe(true);
    } finally {
      rt2.close();
      await rt2.remove('pulled', NS).catch(() => {});
      await reg.stop();
    }
  }, 60_000);

  it('an unknown image fails without leaving anything', async () => {
    await expect(rt.ensureRunning(runSpec({ name: 'ghost', image: 'nope:1', args: ['/bin/true'] }))).rejects.toThrow(/unknown image/);
    expect((await rt.listContainers(NS)).map((i) => i.id)).toEqual([]);
    await expect(rt.restart(NS, 'ghost')).rejects.toThrow(/not found/);
  });
});
