// ResolverStatuses.net.talos.dev, id 'resolvers': the DNS servers and search domains in use.
// networkd writes it. Talos: pkg/machinery/resources/network/resolver_status.go.
import type { ResolverStatusSpec as ResolverStatusSpecProto } from '../wire/talos/resource/definitions/network/ResolverStatusSpec.ts';
import type { ResourceDefinition } from './definition.ts';
import { NETWORK_NAMESPACE } from './hostname-status.ts';
import { netIP } from './net.ts';

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
    encode: (s): ResolverStatusSpecProto => ({ dns_servers: s.dnsServers.map((a) => netIP(a)!), search_domains: [...s.searchDomains] }),
  },
};
