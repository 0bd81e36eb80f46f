// COSI's namespace 'meta' in machined's State: one ResourceDefinitions.meta.cosi.dev per
// registered type (id the lowercase type) and one Namespaces.meta.cosi.dev per namespace, as COSI
// publishes them, so clients (bronzectl get, talosctl get) can list what exists and resolve names.
import type { DefinitionRegistry } from '../contract/resources/registry.ts';
import { META_NAMESPACE, NAMESPACE_TYPE } from '../contract/resources/namespace.ts';
import { RESOURCE_DEFINITION_TYPE } from '../contract/resources/resource-definition.ts';
import { type Resource, jsonEqual, newResource } from '../state/resource.ts';
import type { State } from '../state/state.ts';

export const META_OWNER = 'MetaController';

/**
 * Makes the resources of `type` in 'meta' match `wanted` (id → spec): creates the missing,
 * updates the changed, destroys those it published before that are no longer wanted.
 */
async function sync(state: State, type: string, wanted: Map<string, unknown>, owner: string): Promise<void> {
  const existing = new Map<string, Resource>();
  for (const r of await state.list(META_NAMESPACE, type)) existing.set(r.metadata.id, r);
  for (const [id, spec] of wanted) {
    const cur = existing.get(id);
    if (!cur) await state.create(newResource(META_NAMESPACE, type, id, spec), { owner });
    else if (!jsonEqual(cur.spec, spec)) await state.update({ ...cur, spec }, { owner, expectedVersion: cur.metadata.version });
  }
  for (const [id, r] of existing) {
    if (!wanted.has(id) && r.metadata.owner === owner) await state.destroy(META_NAMESPACE, type, id, { owner });
  }
}

/** Publishes the registry's definitions as ResourceDefinitions. */
export async function publishDefinitions(state: State, registry: DefinitionRegistry, owner = META_OWNER): Promise<void> {
  await sync(state, RESOURCE_DEFINITION_TYPE, new Map(registry.specs().map((s) => [s.type.toLowerCase(), s])), owner);
}

/** Publishes the namespaces (name → description) as Namespaces. */
export async function publishNamespaces(state: State, namespaces: Readonly<Record<string, string>>, owner = META_OWNER): Promise<void> {
  await sync(state, NAMESPACE_TYPE, new Map(Object.entries(namespaces).map(([name, description]) => [name, { description }])), owner);
}
