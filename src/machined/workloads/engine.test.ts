import { describe, expect, it } from 'vitest';
import type { ContainerRunSpec } from '../../containerd/types.ts';
import { type Declared, type ImageState, type InstanceState, type RuntimePort, WorkloadEngine, declaredHash } from './engine.ts';
import { NodeWorkloads, type WorkloadsConnection } from './node-workloads.ts';

const quiet = { info() {}, warn() {}, error() {}, debug() {} } as never;

function spec(name: string, over: Partial<ContainerRunSpec> = {}): ContainerRunSpec {
  return { name, image: 'reg:5000/busybox:1', environment: [], mounts: [], profile: 'restricted', capabilities: { add: [], drop: [] }, network: 'host', limits: {}, ...over };
}

class MemoryPort implements RuntimePort {
  images = new Set<string>();
  pulls: string[] = [];
  pullFails = new Map<string, string>();
  running = new Map<string, { hash: string; pid: number }>();
  removed: string[] = [];
  execCode = 0;
  nextPid = 100;
  async imagePresent(ref: string) {
    return this.images.has(ref);
  }
  async pull(ref: string, onProgress?: (p: { digest: string; offset: number; total: number; done: boolean }) => void) {
    this.pulls.push(ref);
    const err = this.pullFails.get(ref);
    if (err) throw new Error(err);
    onProgress?.({ digest: 'sha256:a', offset: 10, total: 10, done: true });
    this.images.add(ref);
  }
  async start(s: ContainerRunSpec, hash: string) {
    const pid = this.nextPid++;
    this.running.set(s.name, { hash, pid });
    return { pid };
  }
  async list() {
    return [...this.running].map(([id, r]) => ({ id, hash: r.hash, pid: r.pid, running: true }));
  }
  async remove(id: string) {
    this.removed.push(id);
    this.running.delete(id);
  }
  async exec() {
    return this.execCode;
  }
  async restart(id: string) {
    const pid = this.nextPid++;
    this.running.set(id, { hash: this.running.get(id)!.hash, pid });
    return { pid };
  }
}

function setup(port = new MemoryPort(), restartDelayMs = 20) {
  const images = new Map<string, ImageState>();
  const instances = new Map<string, InstanceState>();
  const engine = new WorkloadEngine({
    port,
    log: quiet,
    restartDelayMs,
    publish: {
      image: (ref, s) => (s ? images.set(ref, s) : images.delete(ref)),
      instance: (id, s) => (s ? instances.set(id, s) : instances.delete(id)),
    },
  });
  return { port, engine, images, instances };
}

const until = async (cond: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('WorkloadEngine', () => {
  it('pulls a missing image once, then runs the container', async () => {
    const { port, engine, images, instances } = setup();
    await engine.declare([{ spec: spec('web') }]);
    await until(() => instances.get('web')?.phase === 'running');
    expect(port.pulls).toEqual(['reg:5000/busybox:1']);
    expect(images.get('reg:5000/busybox:1')?.phase).toBe('ready');
    expect(instances.get('web')).toMatchObject({ starts: 1, pid: 100 });
    await engine.declare([{ spec: spec('web') }]);
    expect(port.pulls).toHaveLength(1);
    expect(port.running.get('web')?.pid).toBe(100);
    expect(engine.settled().ok).toBe(true);
    engine.stop();
  });

  it('never pulls an image the store has (a node whose registry is gone)', async () => {
    const port = new MemoryPort();
    port.images.add('reg:5000/busybox:1');
    port.pullFails.set('reg:5000/busybox:1', 'registry unreachable');
    const { engine, instances } = setup(port);
    await engine.declare([{ spec: spec('web') }]);
    await until(() => instances.get('web')?.phase === 'running');
    expect(port.pulls).toEqual([]);
    engine.stop();
  });

  it('reports a failed pull in the image status and leaves the container waiting', async () => {
    const port = new MemoryPort();
    port.pullFails.set('reg:5000/nope:1', 'image reg:5000/nope:1 not found in registry reg:5000');
    const { engine, images, instances } = setup(port);
    await engine.declare([{ spec: spec('web', { image: 'reg:5000/nope:1' }) }]);
    await until(() => images.get('reg:5000/nope:1')?.phase === 'failed');
    await engine.reconcile();
    expect(images.get('reg:5000/nope:1')?.error).toMatch(/not found/);
    expect(instances.get('web')).toMatchObject({ phase: 'waiting' });
    expect(instances.get('web')?.message).toMatch(/not found/);
    expect(engine.settled()).toMatchObject({ ok: false });
    engine.stop();
  });

  it('replaces the instance when the document changes and removes it when it goes', async () => {
    const port = new MemoryPort();
    port.images.add('reg:5000/busybox:1');
    const { engine, instances } = setup(port);
    await engine.declare([{ spec: spec('web') }]);
    await until(() => instances.get('web')?.phase === 'running');
    const first = port.running.get('web')!;
    await engine.declare([{ spec: spec('web', { environment: ['A=1'] }) }]);
    await until(() => port.running.get('web')?.pid !== first.pid);
    expect(port.running.get('web')?.hash).not.toBe(first.hash);
    await engine.declare([]);
    expect(port.running.size).toBe(0);
    expect(instances.size).toBe(0);
    engine.stop();
  });

  it('restarts an exited instance after the delay, and removes strays', async () => {
    const port = new MemoryPort();
    port.images.add('reg:5000/busybox:1');
    port.running.set('stray', { hash: 'x', pid: 5 });
    const { engine, instances } = setup(port);
    await engine.declare([{ spec: spec('web') }]);
    await until(() => instances.get('web')?.phase === 'running');
    expect(port.removed).toContain('stray');
    engine.exited('web', 137);
    expect(instances.get('web')).toMatchObject({ phase: 'exited', exitCode: 137 });
    await until(() => instances.get('web')?.starts === 2 && instances.get('web')?.phase === 'running');
    engine.stop();
  });

  it('restarts a declared container on request: a new task, one start more', async () => {
    const port = new MemoryPort();
    port.images.add('reg:5000/busybox:1');
    const { engine, instances } = setup(port);
    await engine.declare([{ spec: spec('web') }]);
    await until(() => instances.get('web')?.phase === 'running');
    expect(await engine.restart('web')).toBe(true);
    expect(instances.get('web')).toMatchObject({ phase: 'running', pid: 101, starts: 2 });
    expect(await engine.restart('other')).toBe(false);
    engine.stop();
  });

  it('adopts an instance of the same document that runs already', async () => {
    const port = new MemoryPort();
    port.images.add('reg:5000/busybox:1');
    const d: Declared = { spec: spec('web') };
    port.running.set('web', { hash: declaredHash(d), pid: 42 });
    const { engine, instances } = setup(port);
    await engine.declare([d]);
    expect(instances.get('web')).toMatchObject({ phase: 'running', pid: 42 });
    expect(port.removed).toEqual([]);
    engine.stop();
  });

  it('waits for the containers it depends on', async () => {
    const port = new MemoryPort();
    const { engine, instances } = setup(port);
    port.pullFails.set('reg:5000/db:1', 'down');
    await engine.declare([{ spec: spec('app'), dependsOn: { containers: ['db'] } }, { spec: spec('db', { image: 'reg:5000/db:1' }) }]);
    await until(() => instances.get('app')?.message === 'waiting for container db');
    expect(port.running.has('app')).toBe(false);
    engine.stop();
  });

  it('marks a container healthy on probes and restarts it after failureThreshold failures', async () => {
    const port = new MemoryPort();
    port.images.add('reg:5000/busybox:1');
    const { engine, instances } = setup(port);
    const probe = { exec: { command: ['true'] }, initialDelaySeconds: 0, periodSeconds: 0.02, timeoutSeconds: 1, failureThreshold: 2, successThreshold: 1 };
    await engine.declare([{ spec: spec('web'), probe }]);
    await until(() => instances.get('web')?.healthy === true, 3000);
    expect(engine.settled().ok).toBe(true);
    port.execCode = 1;
    await until(() => (instances.get('web')?.starts ?? 0) >= 2, 3000);
    expect(port.removed).toContain('web');
    expect(engine.settled().ok).toBe(false);
    engine.stop();
  });
});

describe('NodeWorkloads.stopAll', () => {
  /** A node whose containerd is (or is not) up, its connection a fake runtime holding `containers`. */
  function node(containers: Array<{ id: string; status: string }>, stop: (id: string) => Promise<void>, up = true) {
    const stops: Array<{ id: string; namespace: string | undefined }> = [];
    const warnings: string[] = [];
    let connected = 0;
    const conn = {
      runtime: {
        listContainers: async (namespace: string) => containers.map((c) => ({ ...c, namespace, image: 'i', pid: 1, cgroup: '', labels: {} })),
        stop: (id: string, namespace?: string) => (stops.push({ id, namespace }), stop(id)),
      },
      port: new MemoryPort(),
      close() {},
    } as unknown as WorkloadsConnection;
    const log = { info() {}, error() {}, debug() {}, warn: (m: string) => void warnings.push(m) } as never;
    const nw = new NodeWorkloads({ log, socket: '/nowhere', connect: () => (connected++, conn) });
    nw.follow({ on: () => undefined, list: () => [{ id: 'containerd', state: up ? 'Running' : 'Waiting', healthy: up ? true : undefined, restarts: 0, events: [] }] });
    return { nw, stops, warnings, connected: () => connected };
  }

  it("stops every container of the operator's namespace through the runtime, in parallel, the engine first", async () => {
    const { nw, stops } = node(
      [
        { id: 'web', status: 'running' },
        { id: 'db', status: 'paused' },
        { id: 'old', status: 'stopped' },
        { id: 'job', status: 'running' },
      ],
      () => new Promise((r) => setTimeout(r, 100)),
    );
    const { port, engine } = setup();
    nw.engine(engine);
    const t0 = Date.now();
    await nw.stopAll();
    expect(Date.now() - t0).toBeLessThan(250); // three stops of 100 ms, at once
    expect(stops).toEqual(['web', 'db', 'job'].map((id) => ({ id, namespace: 'taloscontainers' })));
    // The engine starts nothing any more.
    await engine.declare([{ spec: spec('web') }]);
    expect(port.running.size).toBe(0);
  });

  it('waits no longer than its bound, and logs what did not stop', async () => {
    const { nw, warnings } = node(
      [
        { id: 'stuck', status: 'running' },
        { id: 'quick', status: 'running' },
      ],
      (id) => (id === 'stuck' ? new Promise<void>(() => {}) : Promise.resolve()),
    );
    const t0 = Date.now();
    await nw.stopAll(50);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(warnings).toEqual([expect.stringMatching(/not stopped within 50 ms \(stuck\)/)]);
  });

  it('does nothing while containerd is not up', async () => {
    const { nw, stops, connected } = node([{ id: 'web', status: 'running' }], async () => {}, false);
    await nw.stopAll();
    expect(connected()).toBe(0);
    expect(stops).toEqual([]);
  });
});
