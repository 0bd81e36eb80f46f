// ResolverStatuses.net.talos.dev, id 'resolvers': the DNS servers and search domains in use.
// networkd writes it. Talos: pkg/machinery/resources/network/resolver_status.go.
import type { ResourceDefinition } from './definition.ts';
import { NETWORK_NAMESPACE } from './hostname-status.ts';

export interface ResolverStatusSpec {
  dnsServers: string[];
  searchDomains: string[];
}

export const RESOLVER_STATUS_TYPE = 'ResolverStatuses.net.talos.dev';
export const RESOLVER_STATUS_ID = 'resolvers';

export const resolverStatusDefinition: ResourceDefinition<ResolverStatusSpec> = {
  type: RESOLVER_STATUS_TYPE,
  displayType: 'ResolverStatus',
  aliases: ['resolvers'],
  defaultNamespace: NETWORK_NAMESPACE,
  owner: 'networkd',
  printColumns: [
    { name: 'Resolvers', jsonPath: '{.dnsServers}' },
    { name: 'Search Domains', jsonPath: '{.searchDomains}' },
  ],
  proto: {
    message: 'talos.resource.definitions.network.ResolverStatusSpec',
  },
};
