// The resource types networkd publishes (owner 'networkd', see src/contract/owners.ts), as
// data, in namespace 'network'. machined registers `networkDefinitions` with the others.
// HostnameStatuses.net.bronze.dev is registered by src/state/definitions.ts already;
// networkd publishes into that type (HOSTNAME_STATUS_TYPE) and does not register it again.
import { hostnameStatusDefinition, type ResourceDefinition } from '../state/definitions.ts';

export const NETWORK_NAMESPACE = 'network';

export const LINK_TYPE = 'Links.net.bronze.dev';
export const ADDRESS_TYPE = 'AddressStatuses.net.bronze.dev';
export const ROUTE_TYPE = 'RouteStatuses.net.bronze.dev';
export const RESOLVER_TYPE = 'ResolverStatuses.net.bronze.dev';
export const NODE_ADDRESS_TYPE = 'NodeAddresses.net.bronze.dev';
export const TIME_SERVER_TYPE = 'TimeServerStatuses.net.bronze.dev';
export const HOSTNAME_STATUS_TYPE = hostnameStatusDefinition.type;

/** id: the link name. Spec: LinkSpec (resources.ts). */
export const linksDefinition: ResourceDefinition = {
  type: LINK_TYPE,
  displayType: 'Link',
  aliases: ['linkstatus', 'linkstatuses'],
  defaultNamespace: NETWORK_NAMESPACE,
  printColumns: [
    { name: 'Type', jsonPath: '{.type}' },
    { name: 'Kind', jsonPath: '{.kind}' },
    { name: 'Hw Addr', jsonPath: '{.hardwareAddr}' },
    { name: 'Oper State', jsonPath: '{.operationalState}' },
    { name: 'Link State', jsonPath: '{.linkState}' },
  ],
};

/** id: '<link>/<address>/<prefix>', e.g. 'eth0/10.0.0.2/24'. Spec: AddressSpec. */
export const addressesDefinition: ResourceDefinition = {
  type: ADDRESS_TYPE,
  displayType: 'AddressStatus',
  aliases: ['address', 'addresses'],
  defaultNamespace: NETWORK_NAMESPACE,
  printColumns: [
    { name: 'Address', jsonPath: '{.address}' },
    { name: 'Link', jsonPath: '{.linkName}' },
  ],
};

/** id: '<family>/<gateway>/<destination>/<metric>', as Talos names them. Spec: RouteSpec. */
export const routesDefinition: ResourceDefinition = {
  type: ROUTE_TYPE,
  displayType: 'RouteStatus',
  aliases: ['route', 'routes'],
  defaultNamespace: NETWORK_NAMESPACE,
  printColumns: [
    { name: 'Destination', jsonPath: '{.destination}' },
    { name: 'Gateway', jsonPath: '{.gateway}' },
    { name: 'Link', jsonPath: '{.outLinkName}' },
    { name: 'Metric', jsonPath: '{.priority}' },
  ],
};

/** id: 'resolvers'. Spec: { dnsServers: string[], searchDomains: string[] }. */
export const resolversDefinition: ResourceDefinition = {
  type: RESOLVER_TYPE,
  displayType: 'ResolverStatus',
  aliases: ['resolver', 'resolvers'],
  defaultNamespace: NETWORK_NAMESPACE,
  printColumns: [
    { name: 'Resolvers', jsonPath: '{.dnsServers}' },
    { name: 'Search Domains', jsonPath: '{.searchDomains}' },
  ],
};

/** ids: 'current' (every global address), 'default' (the node's primary address). Spec: { addresses: string[] }. */
export const nodeAddressesDefinition: ResourceDefinition = {
  type: NODE_ADDRESS_TYPE,
  displayType: 'NodeAddress',
  aliases: ['nodeaddress', 'nodeaddresses'],
  defaultNamespace: NETWORK_NAMESPACE,
  printColumns: [{ name: 'Addresses', jsonPath: '{.addresses}' }],
};

/** id: 'timeservers'. Spec: { timeServers: string[] } (for timed). */
export const timeServersDefinition: ResourceDefinition = {
  type: TIME_SERVER_TYPE,
  displayType: 'TimeServerStatus',
  aliases: ['timeserver', 'timeservers'],
  defaultNamespace: NETWORK_NAMESPACE,
  printColumns: [{ name: 'Timeservers', jsonPath: '{.timeServers}' }],
};

/** What networkd adds to the registry (machined registers it with registerDefinitions). */
export const networkDefinitions: readonly ResourceDefinition[] = [
  linksDefinition,
  addressesDefinition,
  routesDefinition,
  resolversDefinition,
  nodeAddressesDefinition,
  timeServersDefinition,
];
