// ResourceDefinitions.meta.cosi.dev: one per resource type, id the lowercase type, in namespace
// 'meta' (COSI: cosi-project/runtime pkg/resource/meta/resource_definition.go). machined
// publishes them from the registry; clients (bronzectl get, talosctl get) resolve what a user
// types against them.
import type { ResourceDefinitionSpec as ResourceDefinitionSpecProto } from '../wire/cosi/resource/meta/ResourceDefinitionSpec.ts';
import type { ResourceDefinition, ResourceDefinitionSpec } from './definition.ts';
import { META_NAMESPACE } from './namespace.ts';

export const RESOURCE_DEFINITION_TYPE = 'ResourceDefinitions.meta.cosi.dev';

export const resourceDefinitionDefinition: ResourceDefinition<ResourceDefinitionSpec> = {
  type: RESOURCE_DEFINITION_TYPE,
  displayType: 'ResourceDefinition',
  aliases: ['api-resources'],
  defaultNamespace: META_NAMESPACE,
  owner: 'machined',
  printColumns: [{ name: 'Aliases', jsonPath: '{.aliases[:]}' }],
  proto: {
    message: 'cosi.resource.meta.ResourceDefinitionSpec',
    encode: (s): ResourceDefinitionSpecProto => ({
      resource_type: s.type,
      display_type: s.displayType,
      default_namespace: s.defaultNamespace,
      aliases: [...s.aliases],
      all_aliases: [...s.allAliases],
      print_columns: s.printColumns.map((c) => ({ name: c.name, json_path: c.jsonPath })),
      sensitivity: s.sensitivity === 'sensitive' ? 1 : 0,
    }),
  },
};
