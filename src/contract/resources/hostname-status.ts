// HostnameStatuses.net.talos.dev, id 'hostname': the node's hostname and domain. networkd writes
// it (from the configuration, DHCP or the default). Talos: pkg/machinery/resources/network/hostname_status.go.
import type { ResourceDefinition } from './definition.ts';

export interface HostnameStatusSpec {
  hostname: string;
  domainname: string;
}

export const NETWORK_NAMESPACE = 'network';
export const HOSTNAME_STATUS_TYPE = 'HostnameStatuses.net.talos.dev';
export const HOSTNAME_STATUS_ID = 'hostname';

export const hostnameStatusDefinition: ResourceDefinition<HostnameStatusSpec> = {
  type: HOSTNAME_STATUS_TYPE,
  displayType: 'HostnameStatus',
  aliases: ['hostname'],
  defaultNamespace: NETWORK_NAMESPACE,
  owner: 'networkd',
  printColumns: [
    { name: 'Hostname', jsonPath: '{.hostname}' },
    { name: 'Domainname', jsonPath: '{.domainname}' },
  ],
  proto: {
    message: 'talos.resource.definitions.network.HostnameStatusSpec',
  },
};
