import { silentLogger } from '../../lib/log.ts';
import { describe, expect, it } from 'vitest';
import { RESOURCE_DEFINITIONS } from '../../contract/resources/registry.ts';
import { CONTROLLERS } from '../registrations.ts';
import { dependencyEdges, inspectHandlers, type TypeOwner } from './inspect.ts';
import { callUnary } from './testing.ts';

const defs: TypeOwner[] = [
  { type: 'MachineConfigs.config.talos.dev', owner: 'machined', defaultNamespace: 'config' },
  { type: 'Services.v1alpha1.talos.dev', owner: 'machined', defaultNamespace: 'runtime' },
  { type: 'MachineStatuses.runtime.talos.dev', owner: 'machined', defaultNamespace: 'runtime' },
  { type: 'LinkStatuses.net.talos.dev', owner: 'networkd', defaultNamespace: 'network' },
];

describe('dependencyEdges', () => {
  it("makes Talos's edges of the controllers' inputs and outputs, and the daemons' and machined's own types", () => {
    const edges = dependencyEdges(
      [
        {
          name: 'ServiceController',
          inputs: [
            { namespace: 'config', type: 'MachineConfigs.config.talos.dev', kind: 'weak' },
            { namespace: 'network', type: 'LinkStatuses.net.talos.dev', kind: 'strong' },
          ],
          outputs: [{ type: 'Services.v1alpha1.talos.dev', kind: 'exclusive' }],
        },
        { name: 'Extra', inputs: [], outputs: [{ type: 'Unknown.bronze.dev', kind: 'shared' }] },
      ],
      defs,
    );
    const e = (controller_name: string, edge_type: string, resource_namespace: string, resource_type: string) => ({ controller_name, edge_type, resource_namespace, resource_type, resource_id: '' });
    expect(edges).toEqual([
      e('Extra', 'OUTPUT_SHARED', '', 'Unknown.bronze.dev'),
      e('ServiceController', 'INPUT_STRONG', 'network', 'LinkStatuses.net.talos.dev'),
      e('ServiceController', 'INPUT_WEAK', 'config', 'MachineConfigs.config.talos.dev'),
      e('ServiceController', 'OUTPUT_EXCLUSIVE', 'runtime', 'Services.v1alpha1.talos.dev'),
      // machined's types that no controller outputs; Services are the controller's.
      e('machined', 'OUTPUT_EXCLUSIVE', 'config', 'MachineConfigs.config.talos.dev'),
      e('machined', 'OUTPUT_EXCLUSIVE', 'runtime', 'MachineStatuses.runtime.talos.dev'),
      e('networkd', 'OUTPUT_EXCLUSIVE', 'network', 'LinkStatuses.net.talos.dev'),
    ]);
  });

  it("covers every type Bronze serves, and every registered controller's declarations", () => {
    const controllers = CONTROLLERS.map((r) => r.make({ supervisor: {} as never, serviceEnv: {}, volumes: () => [], workloads: {} as never, log: silentLogger }));
    const edges = dependencyEdges(controllers, RESOURCE_DEFINITIONS);
    const produced = new Set(edges.filter((e) => e.edge_type.startsWith('OUTPUT')).map((e) => e.resource_type));
    for (const d of RESOURCE_DEFINITIONS) expect(produced.has(d.type), d.type).toBe(true);
    for (const c of controllers) {
      expect(edges.filter((e) => e.controller_name === c.name)).toHaveLength(c.inputs.length + c.outputs.length);
    }
    for (const daemon of ['networkd', 'timed', 'udevd']) expect(edges.some((e) => e.controller_name === daemon), daemon).toBe(true);
  });
});

describe('ControllerRuntimeDependencies', () => {
  it('answers one envelope item with the edges', async () => {
    const h = inspectHandlers({ controllers: () => [], definitions: () => defs.slice(3) });
    const reply = await callUnary(h.ControllerRuntimeDependencies, {});
    expect(reply).toEqual({
      messages: [{ edges: [{ controller_name: 'networkd', edge_type: 'OUTPUT_EXCLUSIVE', resource_namespace: 'network', resource_type: 'LinkStatuses.net.talos.dev', resource_id: '' }] }],
    });
  });
});
