// NodeAddresses.net.talos.dev: the node's addresses, ids 'current' (every usable global address)
// and 'default' (the first of them). networkd writes them. Talos:
// pkg/machinery/resources/network/node_address.go. Bronze orders the addresses its own way (IPv4
// first, then by link and address), which is neither of Talos's sort algorithms, so
// sortAlgorithm is left out.
import type { ResourceDefinition } from './definition.ts';
import { NETWORK_NAMESPACE } from './hostname-status.ts';

export interface NodeAddressSpec {
  /** 'a.b.c.d/n'. */
  addresses: string[];
}

export const NODE_ADDRESS_TYPE = 'NodeAddresses.net.talos.dev';

export const nodeAddressDefinition: ResourceDefinition<NodeAddressSpec> = {
  type: NODE_ADDRESS_TYPE,
  displayType: 'NodeAddress',
  aliases: [],
  defaultNamespace: NETWORK_NAMESPACE,
  owner: 'networkd',
  printColumns: [
    { name: 'Addresses', jsonPath: '{.addresses}' },
    { name: 'SortAlgorithm', jsonPath: '{.sortAlgorithm}' },
  ],
  proto: {
    message: 'talos.resource.definitions.network.NodeAddressSpec',
  },
};
