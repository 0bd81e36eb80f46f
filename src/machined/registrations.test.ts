import { NodeWorkloads } from './workloads/node-workloads.ts';
import { describe, expect, it } from 'vitest';
import { MemoryState } from '../state/memory.ts';
import { StatePublisher } from '../daemon/publisher.ts';
import { DefinitionRegistry } from '../contract/resources/registry.ts';
import { silentLogger } from '../lib/log.ts';
import { Supervisor } from './supervisor/supervisor.ts';
import { CONTROLLERS, PUBLISHERS, machinedControllers, publishSystemFacts } from './registrations.ts';

describe("machined's registrations", () => {
  it('list the controllers once each, in registration order, the kernel- and disk-changing ones node-only', () => {
    expect(CONTROLLERS.map((c) => c.name)).toEqual(['services', 'containers', 'env', 'sysctls', 'files', 'ephemeral mount', 'fstrim']);
    expect(CONTROLLERS.filter((c) => !c.nodeOnly).map((c) => c.name)).toEqual(['services', 'containers', 'env']);
  });

  it('make only the host-safe controllers off a node, and every one as PID 1', () => {
    const d = { supervisor: new Supervisor([]), serviceEnv: {}, volumes: () => [], workloads: new NodeWorkloads({ log: silentLogger, socket: '/nonexistent' }), log: silentLogger };
    const host = machinedControllers(d, false);
    expect(host).toHaveLength(3);
    expect(new Set(host.map((c) => c.name)).size).toBe(3);
    expect(machinedControllers(d, true)).toHaveLength(CONTROLLERS.length);
  });

  it('publish the namespaces and definitions off a node, the system facts only as PID 1', async () => {
    expect(PUBLISHERS.map((p) => `${p.name}${p.nodeOnly ? ' (node)' : ''}`)).toEqual(['namespaces', 'resource definitions', 'security state (node)', 'rootfs status (node)']);
    const state = new MemoryState();
    const registry = new DefinitionRegistry();
    await publishSystemFacts({ state, registry, facts: new StatePublisher(state, 'machined'), cmdline: () => new Map(), log: silentLogger }, false);
    expect((await state.list('meta', 'Namespaces.meta.cosi.dev')).length).toBeGreaterThan(0);
  });
});
