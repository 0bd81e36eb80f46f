// AddressStatuses.net.talos.dev: one per address on a link, id '<link>/<address>/<prefix>'
// ('eth0/10.0.2.15/24'). networkd writes them. Talos: pkg/machinery/resources/network/address_status.go.
import type { ResourceDefinition } from './definition.ts';
import { NETWORK_NAMESPACE } from './hostname-status.ts';
import { ADDRESS_FLAGS, FAMILY, SCOPE } from './net.ts';

export interface AddressStatusSpec {
  /** 'a.b.c.d/n'. */
  address: string;
  local?: string;
  broadcast?: string;
  anycast?: string;
  multicast?: string;
  linkIndex: number;
  linkName: string;
  /** 'inet4' or 'inet6'. */
  family: string;
  /** SCOPE's name. */
  scope: string;
  /** ADDRESS_FLAGS: 'permanent', 'nodad,permanent', ... */
  flags: string;
  priority: number;
}

export const ADDRESS_STATUS_TYPE = 'AddressStatuses.net.talos.dev';

export const addressStatusDefinition: ResourceDefinition<AddressStatusSpec> = {
  type: ADDRESS_STATUS_TYPE,
  displayType: 'AddressStatus',
  aliases: ['address', 'addresses'],
  defaultNamespace: NETWORK_NAMESPACE,
  owner: 'networkd',
  printColumns: [
    { name: 'Address', jsonPath: '{.address}' },
    { name: 'Link', jsonPath: '{.linkName}' },
  ],
  proto: {
    message: 'talos.resource.definitions.network.AddressStatusSpec',
    fields: { family: { as: FAMILY }, scope: { as: SCOPE }, flags: { as: ADDRESS_FLAGS } },
  },
};
