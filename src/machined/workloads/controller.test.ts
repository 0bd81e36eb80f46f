import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../lib/log.ts';
import { ControllerRuntime } from '../../state/controller.ts';
import { MemoryState } from '../../state/memory.ts';
import { newResource } from '../../state/resource.ts';
import { MACHINE_CONFIG_ID, MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE } from '../../contract/resources/machine-config.ts';
import { CONTAINERS_NAMESPACE, CONTAINER_SPEC_TYPE } from '../../contract/resources/container-spec.ts';
import { CONTAINER_IMAGE_STATUS_TYPE } from '../../contract/resources/container-image-status.ts';
import { CONTAINER_INSTANCE_SPEC_TYPE } from '../../contract/resources/container-instance-spec.ts';
import { CONTAINER_STATUS_TYPE } from '../../contract/resources/container-status.ts';
import { type DocumentPart, machineConfigSpecOf } from '../../config/testing.ts';
import type { ContainerRunSpec } from '../../containerd/types.ts';
import type { RuntimePort } from './engine.ts';
import { containerController, unmetDependency } from './controller.ts';

const until = async (fn: () => Promise<boolean> | boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
};

function memoryPort() {
  const running = new Map<string, { hash: string; pid: number }>();
  let pid = 300;
  const port: RuntimePort = {
    imagePresent: async () => false,
    pull: async () => ({ digest: 'sha256:abc' }),
    start: async (s: ContainerRunSpec, hash: string) => {
      running.set(s.name, { hash, pid: ++pid });
      return { pid };
    },
    list: async () => [...running].map(([id, r]) => ({ id, hash: r.hash, pid: r.pid, running: true })),
    remove: async (id) => void running.delete(id),
    exec: async () => 0,
    restart: async (id) => {
      running.set(id, { hash: running.get(id)!.hash, pid: ++pid });
      return { pid };
    },
  };
  return { port, running };
}

const find = (state: MemoryState, ns: string, type: string, id: string) => state.get(ns, type, id).catch(() => undefined);

const web = (env: string[] = []): DocumentPart => ({ kind: 'ContainerConfig', name: 'web', image: '10.0.2.2:5000/busybox:1', environment: env, network: { mode: 'host' } }) as DocumentPart;

describe('ContainerController', () => {
  let runtime: ControllerRuntime | undefined;
  afterEach(async () => {
    await runtime?.stop();
  });

  async function publish(state: MemoryState, documents: DocumentPart[]) {
    const spec = machineConfigSpecOf({ version: 'v1alpha1' }, documents);
    const existing = await state.get(MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID).catch(() => undefined);
    if (existing) await state.update({ ...existing, spec }, { owner: 'machined' });
    else await state.create(newResource(MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID, spec), { owner: 'machined' });
  }

  it('publishes specs, image and instance statuses, replaces on change and cleans up on removal', async () => {
    const state = new MemoryState();
    const { port, running } = memoryPort();
    let available = false;
    runtime = new ControllerRuntime(state, { log: silentLogger });
    runtime.register(containerController({ port: () => (available ? port : undefined), log: silentLogger }));
    runtime.start();
    await publish(state, [web()]);
    // containerd not up yet: the spec is there, the container waits for it.
    await until(async () => (await state.list(CONTAINERS_NAMESPACE, CONTAINER_STATUS_TYPE)).length === 1);
    expect((await state.get(CONTAINERS_NAMESPACE, CONTAINER_SPEC_TYPE, 'web')).spec).toMatchObject({ image: { ref: '10.0.2.2:5000/busybox:1' } });
    expect((await state.get(CONTAINERS_NAMESPACE, CONTAINER_STATUS_TYPE, 'web')).spec).toMatchObject({ phase: 'waiting', message: 'waiting for containerd' });
    available = true;
    await until(async () => ((await state.get(CONTAINERS_NAMESPACE, CONTAINER_STATUS_TYPE, 'web')).spec as { phase: string }).phase === 'running');
    await until(async () => ((await find(state, CONTAINERS_NAMESPACE, CONTAINER_IMAGE_STATUS_TYPE, 'web'))?.spec as { phase?: string } | undefined)?.phase === 'ready');
    expect((await state.get(CONTAINERS_NAMESPACE, CONTAINER_IMAGE_STATUS_TYPE, 'web')).spec).toMatchObject({ digest: 'sha256:abc' });
    await until(async () => !!(await find(state, CONTAINERS_NAMESPACE, CONTAINER_INSTANCE_SPEC_TYPE, 'web-1')));
    // A changed document: generation 2, the first instance's spec gone.
    await publish(state, [web(['A=1'])]);
    await until(async () => !!(await find(state, CONTAINERS_NAMESPACE, CONTAINER_INSTANCE_SPEC_TYPE, 'web-2')));
    await until(async () => !(await find(state, CONTAINERS_NAMESPACE, CONTAINER_INSTANCE_SPEC_TYPE, 'web-1')));
    expect((await state.get(CONTAINERS_NAMESPACE, CONTAINER_INSTANCE_SPEC_TYPE, 'web-2')).spec).toMatchObject({ containerID: 'web', generation: 2, environment: ['A=1'] });
    // Removed: nothing runs, no resource is left.
    await publish(state, []);
    await until(async () => running.size === 0);
    for (const t of [CONTAINER_SPEC_TYPE, CONTAINER_IMAGE_STATUS_TYPE, CONTAINER_INSTANCE_SPEC_TYPE, CONTAINER_STATUS_TYPE]) {
      await until(async () => (await state.list(CONTAINERS_NAMESPACE, t)).length === 0);
    }
  });

  it('says which dependency a container waits for', () => {
    const c = { time: false, addresses: true, connectivity: false, hostname: true, etcfiles: true };
    const dep = (o: Partial<{ paths: string[]; networks: string[]; time: boolean }>) => ({ dependsOn: { paths: [], networks: [], time: false, containers: [], ...o } });
    expect(unmetDependency(dep({ time: true }), c)).toBe('waiting for the clock to be synchronized');
    expect(unmetDependency(dep({ networks: ['addresses', 'connectivity'] }), c)).toBe('waiting for network condition connectivity');
    expect(unmetDependency(dep({ paths: ['/nope'] }), c, () => false)).toBe('waiting for path /nope');
    expect(unmetDependency(dep({ networks: ['hostname'] }), c)).toBeUndefined();
  });
});
