// ResourceDefinitions.meta.cosi.dev: one per resource type, id the lowercase type, in namespace
// 'meta' (COSI: cosi-project/runtime pkg/resource/meta/resource_definition.go). machined
// publishes them from the registry; clients (bronzectl get, talosctl get) resolve what a user
// types against them.
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
    yamlOnly: ['skipAutomaticAliases'],
    fields: { resource_type: { from: 'type' }, sensitivity: { as: (s?: string) => (s === 'sensitive' ? 1 : 0) } },
  },
};
