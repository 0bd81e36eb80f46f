// TimeServerStatuses.net.talos.dev, id 'timeservers': the NTP servers timed should use.
// networkd writes it (configuration, DHCP, or the default). Talos:
// pkg/machinery/resources/network/timeserver_status.go.
import type { ResourceDefinition } from './definition.ts';
import { NETWORK_NAMESPACE } from './hostname-status.ts';

export interface TimeServerStatusSpec {
  timeServers: string[];
}

export const TIME_SERVER_STATUS_TYPE = 'TimeServerStatuses.net.talos.dev';
export const TIME_SERVER_STATUS_ID = 'timeservers';

export const timeServerStatusDefinition: ResourceDefinition<TimeServerStatusSpec> = {
  type: TIME_SERVER_STATUS_TYPE,
  displayType: 'TimeServerStatus',
  aliases: ['timeserver', 'timeservers'],
  defaultNamespace: NETWORK_NAMESPACE,
  owner: 'networkd',
  printColumns: [{ name: 'Timeservers', jsonPath: '{.timeServers}' }],
  proto: {
    message: 'talos.resource.definitions.network.TimeServerStatusSpec',
    fields: { ntp_servers: { from: 'timeServers' } },
  },
};
