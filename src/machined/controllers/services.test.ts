// ServiceController in a real ControllerRuntime over a MemoryState, fed by a stand-in
// supervisor (the integration test in src/machined/api/server.test.ts uses the real one).

import { silentLogger } from '../../lib/log.ts';
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { ControllerRuntime } from '../../state/controller.ts';
import { MemoryState } from '../../state/memory.ts';
import type { ServiceInfo, ServiceState } from '../supervisor/types.ts';
import { SERVICES_NAMESPACE, SERVICES_TYPE, SERVICE_CONTROLLER, serviceController, serviceSpec, type ServiceSpec } from './services.ts';

class FakeSupervisor extends EventEmitter {
  readonly infos = new Map<string, ServiceInfo>();
  list = () => [...this.infos.values()];
  set(id: string, state: ServiceState, healthy?: boolean) {
    this.infos.set(id, { id, state, healthy, restarts: 0, events: [] });
    this.emit('event', id, { ts: new Date(), state, message: '' });
  }
}

const quiet = silentLogger;
const runtimes: ControllerRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.stop()));
});

async function waitFor(what: string, ok: () => boolean | Promise<boolean>, timeout = 3000): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function setup(opts: { includeMachined?: boolean } = {}) {
  const state = new MemoryState();
  const sup = new FakeSupervisor();
  const rt = new ControllerRuntime(state, { log: quiet, backoffBase: 10 });
  runtimes.push(rt);
  rt.register(serviceController(sup, opts));
  const spec = async (id: string) => {
    const list = await state.list<ServiceSpec>(SERVICES_NAMESPACE, SERVICES_TYPE);
    return list.find((r) => r.metadata.id === id)?.spec;
  };
  return { state, sup, rt, spec };
}

describe('serviceSpec', () => {
  it('running when Running; health unknown until checked', () => {
    expect(serviceSpec({ state: 'Running', healthy: true })).toEqual({ running: true, healthy: true, unknown: false });
    expect(serviceSpec({ state: 'Running', healthy: undefined })).toEqual({ running: true, healthy: false, unknown: true });
    expect(serviceSpec({ state: 'Waiting', healthy: undefined })).toEqual({ running: false, healthy: false, unknown: true });
  });
});

describe('ServiceController', () => {
  it('creates a resource per service (and machined), owned by ServiceController, and follows state changes', async () => {
    const { state, sup, rt, spec } = setup();
    sup.set('udevd', 'Running', true);
    sup.set('apid', 'Waiting');
    rt.start();
    await waitFor('resources', async () => (await spec('apid')) !== undefined);
    const list = await state.list(SERVICES_NAMESPACE, SERVICES_TYPE);
    expect(list.map((r) => r.metadata.id)).toEqual(['apid', 'machined', 'udevd']);
    expect(list.every((r) => r.metadata.owner === SERVICE_CONTROLLER)).toBe(true);
    expect(await spec('machined')).toEqual({ running: true, healthy: false, unknown: true });
    expect(await spec('udevd')).toEqual({ running: true, healthy: true, unknown: false });

    sup.set('apid', 'Running');
    await waitFor('apid running', async () => (await spec('apid'))?.running === true);
    sup.set('apid', 'Running', true);
    await waitFor('apid healthy', async () => (await spec('apid'))?.healthy === true);
    sup.set('udevd', 'Finished');
    await waitFor('udevd stopped', async () => (await spec('udevd'))?.running === false);
  });

  it('a restart faster than a pass still shows as running: false, then true', async () => {
    const { state, sup, rt, spec } = setup({ includeMachined: false });
    sup.set('apid', 'Running');
    rt.start();
    await waitFor('apid', async () => (await spec('apid')) !== undefined);
    const ac = new AbortController();
    const seen: boolean[] = [];
    const watching = (async () => {
      for await (const ev of state.watch<ServiceSpec>(SERVICES_NAMESPACE, SERVICES_TYPE, 'apid', { signal: ac.signal })) {
        if (ev.type === 'updated') seen.push(ev.resource.spec.running);
      }
    })();
    sup.set('apid', 'Finished');
    sup.set('apid', 'Waiting');
    sup.set('apid', 'Running');
    await waitFor('both updates', () => seen.length >= 2);
    expect(seen).toEqual([false, true]);
    ac.abort();
    await watching;
  });

  it('leaves unchanged resources at their version', async () => {
    const { state, sup, rt, spec } = setup({ includeMachined: false });
    sup.set('udevd', 'Running', true);
    rt.start();
    await waitFor('udevd', async () => (await spec('udevd')) !== undefined);
    sup.set('udevd', 'Running', true); // same spec
    sup.set('other', 'Waiting');
    await waitFor('other', async () => (await spec('other')) !== undefined);
    expect((await state.get(SERVICES_NAMESPACE, SERVICES_TYPE, 'udevd')).metadata.version).toBe(1);
    expect(await spec('machined')).toBeUndefined();
  });

  it('a burst of events that change nothing reads and writes nothing (the boot has dozens)', async () => {
    const { state, sup, rt, spec } = setup();
    for (const id of ['apid', 'networkd', 'udevd', 'timed', 'trustd']) sup.set(id, 'Running', true);
    rt.start();
    await waitFor('trustd', async () => (await spec('trustd')) !== undefined);
    const calls = { get: 0, list: 0, create: 0, update: 0 };
    for (const m of Object.keys(calls) as Array<keyof typeof calls>) {
      const real = state[m].bind(state) as (...a: unknown[]) => unknown;
      (state as unknown as Record<string, unknown>)[m] = (...a: unknown[]) => {
        calls[m]++;
        return real(...a);
      };
    }
    for (let i = 0; i < 20; i++) sup.set('networkd', 'Running', true);
    sup.set('udevd', 'Running', false);
    await waitFor('udevd unhealthy', async () => (await spec('udevd'))?.healthy === false);
    // The one change: udevd read and updated once; the lookups of the test's own spec() are lists.
    expect({ get: calls.get, create: calls.create, update: calls.update }).toEqual({ get: 1, create: 0, update: 1 });
    const ownLists = calls.list;
    sup.set('timed', 'Running', true);
    await new Promise((r) => setTimeout(r, 50));
    expect(calls.list, 'no list while the set of services is the same').toBe(ownLists);
  });

  it('removes resources of services that are gone, and unsubscribes when stopped', async () => {
    const { sup, rt, spec } = setup({ includeMachined: false });
    sup.set('a', 'Running');
    sup.set('b', 'Running');
    rt.start();
    await waitFor('b', async () => (await spec('b')) !== undefined);
    sup.infos.delete('b');
    sup.set('a', 'Running', true);
    await waitFor('b gone', async () => (await spec('b')) === undefined);
    expect(sup.listenerCount('event')).toBe(1);
    await rt.stop();
    expect(sup.listenerCount('event')).toBe(0);
  });
});
