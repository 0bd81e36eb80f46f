// inspect.InspectService/ControllerRuntimeDependencies (Talos's inspect API): the graph of what
// produces and consumes each resource type on this node, as edges between a producer or consumer
// and a type.
//   - machined's controllers (src/machined/registrations.ts), as they declared themselves to the
//     controller runtime: each input an INPUT_STRONG or INPUT_WEAK edge, each output an
//     OUTPUT_EXCLUSIVE or OUTPUT_SHARED edge (its namespace: the type's default one);
//   - the daemons, each an OUTPUT_EXCLUSIVE edge to every type it owns (the resource
//     definitions' `owner`: networkd, timed, udevd), and machined itself to the types it owns
//     that no controller outputs (what its own parts publish: configuration, status, mounts).
// Sorted by producer or consumer, then type: the same node gives the same graph.
import type * as grpc from '@grpc/grpc-js';
import type { ControllerDependencies } from '../../state/controller.ts';
import type { ResourceDefinition } from '../../contract/resources/definition.ts';
import type { ControllerDependencyEdge__Output } from '../../contract/wire/inspect/ControllerDependencyEdge.ts';
import { unary } from './common.ts';

export type DependencyEdge = ControllerDependencyEdge__Output;

export type TypeOwner = Pick<ResourceDefinition, 'type' | 'owner' | 'defaultNamespace'>;

export interface InspectDeps {
  /** The controllers machined runs (ControllerRuntime.dependencies). */
  controllers: () => readonly ControllerDependencies[];
  /** Every resource type served, with its owner (DefinitionRegistry.list). */
  definitions: () => readonly TypeOwner[];
}

/** The edges of the graph, in a stable order. */
export function dependencyEdges(controllers: readonly ControllerDependencies[], definitions: readonly TypeOwner[]): DependencyEdge[] {
  const namespaceOf = new Map(definitions.map((d) => [d.type, d.defaultNamespace]));
  const edges: DependencyEdge[] = [];
  const edge = (controller_name: string, edge_type: DependencyEdge['edge_type'], resource_namespace: string, resource_type: string): void =>
    void edges.push({ controller_name, edge_type, resource_namespace, resource_type, resource_id: '' });
  const outputByController = new Set<string>();
  for (const c of controllers) {
    for (const i of c.inputs) edge(c.name, i.kind === 'strong' ? 'INPUT_STRONG' : 'INPUT_WEAK', i.namespace, i.type);
    for (const o of c.outputs) {
      outputByController.add(o.type);
      edge(c.name, o.kind === 'exclusive' ? 'OUTPUT_EXCLUSIVE' : 'OUTPUT_SHARED', namespaceOf.get(o.type) ?? '', o.type);
    }
  }
  for (const d of definitions) {
    if (d.owner === 'machined' && outputByController.has(d.type)) continue;
    edge(d.owner, 'OUTPUT_EXCLUSIVE', d.defaultNamespace, d.type);
  }
  const key = (e: DependencyEdge) => [e.controller_name, e.resource_type, e.edge_type, e.resource_namespace];
  return edges.sort((a, b) => {
    const [ka, kb] = [key(a), key(b)];
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i]! < kb[i]! ? -1 : 1;
    return 0;
  });
}

export function inspectHandlers(deps: InspectDeps): Record<string, grpc.handleUnaryCall<any, any>> {
  return {
    ControllerRuntimeDependencies: unary(() => ({ messages: [{ edges: dependencyEdges(deps.controllers(), deps.definitions()) }] })),
  };
}
