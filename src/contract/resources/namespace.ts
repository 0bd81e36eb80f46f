// Namespaces.meta.cosi.dev: one per namespace resources live in, id its name, in namespace
// 'meta' (COSI: cosi-project/runtime pkg/resource/meta/namespace.go). machined publishes them.
import type { ResourceDefinition } from './definition.ts';

export interface NamespaceSpec {
  description: string;
}

export const META_NAMESPACE = 'meta';
export const NAMESPACE_TYPE = 'Namespaces.meta.cosi.dev';

/** The namespaces Bronze's resources live in, as data. */
export const NAMESPACES: Readonly<Record<string, string>> = {
  meta: 'Metadata: the namespaces and the resource definitions.',
  config: 'The machine configuration.',
  runtime: 'The running system: services, boot, kernel parameters, block devices, time.',
  network: 'Network links, addresses, routes, resolvers, hostname and time servers.',
  cluster: 'The cluster: its members.',
  containers: 'The declared containers: their specs, images and running instances.',
};

export const namespaceDefinition: ResourceDefinition<NamespaceSpec> = {
  type: NAMESPACE_TYPE,
  displayType: 'Namespace',
  aliases: ['ns'],
  defaultNamespace: META_NAMESPACE,
  owner: 'machined',
  printColumns: [],
  proto: {
    message: 'cosi.resource.meta.NamespaceSpec',
  },
};
