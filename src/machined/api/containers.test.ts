import { describe, expect, it } from 'vitest';
import { MemoryWorkloads } from '../../containerd/testing.ts';
import { containerNamespace, containersHandlers } from './containers.ts';
import { callUnary } from './testing.ts';

function setup() {
  const w = new MemoryWorkloads();
  w.addContainer('taloscontainers', { id: 'web', image: '10.0.2.2:5000/busybox:1', pid: 42 }, { stats: { memoryUsage: 5_000_000, cpuUsageNanos: 123_456 } });
  w.addContainer('taloscontainers', { id: 'batch', image: 'docker.io/library/alpine:3', pid: 0, status: 'stopped' });
  w.addContainer('system', { id: 'other', image: 'x' });
  return { w, h: containersHandlers({ workloads: () => w }) };
}

describe('containerNamespace', () => {
  it("takes containerd's namespace names; CRI only with k8s.io", () => {
    expect(containerNamespace('taloscontainers', 'CONTAINERD')).toBe('taloscontainers');
    expect(containerNamespace('k8s.io', 'CRI')).toBe('k8s.io');
    expect(containerNamespace('system', undefined)).toBe('system');
    for (const bad of ['', 'a/b', '-x', 'a..b', 'x'.repeat(77)]) expect(() => containerNamespace(bad, 'CONTAINERD'), bad).toThrow();
    expect(() => containerNamespace('taloscontainers', 'CRI')).toThrow('the CRI driver is only for the k8s.io namespace');
    expect(() => containerNamespace('system', 'DOCKER')).toThrow('unsupported container driver');
  });
});

describe('Containers', () => {
  it("lists a namespace's containers with Talos's fields, sorted by id", async () => {
    const { h } = setup();
    const reply = await callUnary(h.Containers, { namespace: 'taloscontainers', driver: 'CONTAINERD' });
    expect(reply.messages).toHaveLength(1);
    expect(reply.messages[0].containers).toEqual([
      { namespace: 'taloscontainers', id: 'batch', internal_id: 'batch', uid: '', image: 'docker.io/library/alpine:3', pid: 0, status: 'STOPPED', pod_id: 'batch', name: 'batch', network_namespace: '' },
      { namespace: 'taloscontainers', id: 'web', internal_id: 'web', uid: '', image: '10.0.2.2:5000/busybox:1', pid: 42, status: 'RUNNING', pod_id: 'web', name: 'web', network_namespace: '' },
    ]);
  });

  it('namespaces are apart; one without containers answers an empty list', async () => {
    const { h } = setup();
    expect((await callUnary(h.Containers, { namespace: 'system' })).messages[0].containers.map((c: { id: string }) => c.id)).toEqual(['other']);
    expect((await callUnary(h.Containers, { namespace: 'k8s.io', driver: 'CRI' })).messages[0].containers).toEqual([]);
  });

  it('bad namespace → INVALID_ARGUMENT; no runtime yet → UNAVAILABLE', async () => {
    const { h } = setup();
    await expect(callUnary(h.Containers, { namespace: '' })).rejects.toMatchObject({ code: 3, message: expect.stringContaining('namespace is required') });
    await expect(callUnary(h.Containers, { namespace: 'no such/ns' })).rejects.toMatchObject({ code: 3 });
    const none = containersHandlers({ workloads: () => undefined });
    await expect(callUnary(none.Containers, { namespace: 'taloscontainers' })).rejects.toEqual({ code: 14, message: 'containerd is not running yet' });
    await expect(callUnary(containersHandlers().Stats, { namespace: 'taloscontainers' })).rejects.toMatchObject({ code: 14 });
  });

  it("a runtime error keeps containerd's code", async () => {
    const w = new MemoryWorkloads();
    w.listContainers = async () => {
      throw Object.assign(new Error('namespace "x" is being deleted'), { code: 9 });
    };
    await expect(callUnary(containersHandlers({ workloads: () => w }).Containers, { namespace: 'x' })).rejects.toEqual({ code: 9, message: 'namespace "x" is being deleted' });
  });
});

describe('Stats', () => {
  it("memory and cpu of each container the runtime has figures for (Talos's Stat fields)", async () => {
    const { h } = setup();
    const reply = await callUnary(h.Stats, { namespace: 'taloscontainers' });
    expect(reply.messages[0].stats).toEqual([{ namespace: 'taloscontainers', id: 'web', pod_id: 'web', name: 'web', memory_usage: 5_000_000, cpu_usage: 123_456 }]);
  });
});

describe('Restart', () => {
  it('makes a new instance of the container', async () => {
    const { h, w } = setup();
    const before = (await w.listContainers('taloscontainers')).find((c) => c.id === 'web')!.pid;
    expect(await callUnary(h.Restart, { namespace: 'taloscontainers', id: 'web' })).toEqual({ messages: [{}] });
    expect(w.calls).toContain('restart taloscontainers web');
    expect((await w.listContainers('taloscontainers')).find((c) => c.id === 'web')!.pid).not.toBe(before);
  });

  it('unknown container → NOT_FOUND naming it and its namespace; no id → INVALID_ARGUMENT', async () => {
    const { h, w } = setup();
    // The runtime's own NOT_FOUND, as it words it (src/containerd/runtime.ts), is answered as it is.
    await expect(callUnary(h.Restart, { namespace: 'taloscontainers', id: 'nope' })).rejects.toEqual({ code: 5, message: 'container taloscontainers/nope not found' });
    await expect(callUnary(h.Restart, { namespace: 'system', id: 'web' })).rejects.toMatchObject({ code: 5 });
    await expect(callUnary(h.Restart, { namespace: 'taloscontainers' })).rejects.toMatchObject({ code: 3, message: 'container id is required' });
    // No lookup before: the runtime is asked once per call with an id, and says whether the container exists.
    expect(w.calls.filter((c) => c.startsWith('restart'))).toEqual(['restart taloscontainers nope', 'restart system web']);
    expect(w.calls.filter((c) => c.startsWith('listContainers'))).toEqual([]);
  });
});
