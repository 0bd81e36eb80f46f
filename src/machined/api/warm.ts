// What a client's first calls through the API need machined to have made, made while the node
// still starts instead of while the first caller waits: the protobufjs code of the messages
// every client's first calls carry (protobufjs generates a type's encoder and decoder when it
// is first used, src/contract/lazy-codegen.ts), the YAML library's first stringify, and the
// first run of machined's own code on that path.
//
// The calls warmed are the ones every client starts with: `bronzectl get` and `talosctl get`
// first read ResourceDefinitions (to resolve the type they are asked for), then Get or List the
// resource; most sessions begin with Version. Measured in one boot under QEMU/TCG: the first
// ResourceDefinitions Get spent 558 ms in apid, of which 138 ms in machined turning the resource
// into its wire form alone, the rest mostly in the first encoding and decoding of each message.
// Warming costs machined the same CPU once (whoever calls first would have paid it), so it runs
// after the API serves and never delays it; it only reads. Each step is a separate turn of the
// event loop: a call that comes in while it warms is served between two steps (its own first
// encoding then makes what the next step would have), not after all of them.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { serviceDefinition } from '../../contract/protos.ts';
import { RESOURCE_DEFINITION_TYPE } from '../../contract/resources/resource-definition.ts';
import { META_NAMESPACE } from '../../contract/resources/namespace.ts';
import type { DefinitionRegistry } from '../../contract/resources/registry.ts';
import { versionReply } from '../../daemon/serve.ts';
import type { State } from '../../state/state.ts';
import { toWireResource } from './resources.ts';

/** One method's request and reply, as the server decodes and encodes them. */
function roundTrip(service: string, method: string, request: object, reply: object): void {
  const m = serviceDefinition(service)[method]!;
  m.requestDeserialize(m.requestSerialize(request) as Buffer);
  m.responseSerialize(reply);
}

/** Warms the API's first calls (see above); resolves when done. Throws what failed. */
export async function warmApi(deps: { state: State; registry: DefinitionRegistry }): Promise<void> {
  roundTrip('machine.MachineService', 'Version', {}, versionReply());
  await nextTurn();
  // The definition of ResourceDefinitions itself (meta.ts publishes one per type, its id the
  // type in lower case): read alone, not by listing (and so copying) them all.
  const definition = await deps.state.get(META_NAMESPACE, RESOURCE_DEFINITION_TYPE, RESOURCE_DEFINITION_TYPE.toLowerCase()).catch(() => undefined);
  if (!definition) return;
  const { namespace, type, id } = definition.metadata;
  const resource = toWireResource(definition, deps.registry.get(type));
  await nextTurn();
  roundTrip('cosi.resource.State', 'Get', { namespace, type, id }, { resource });
  await nextTurn();
  roundTrip('cosi.resource.State', 'List', { namespace, type }, { resource });
}
