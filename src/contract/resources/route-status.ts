// RouteStatuses.net.talos.dev: one per route (every table but the kernel's local one), id
// '<family>/<gateway>/<destination>/<metric>' as Talos names them ('inet4/10.0.2.2//1024').
// networkd writes them. Talos: pkg/machinery/resources/network/route_status.go. Talos's
// RouteStatus has no next hops: a multipath route is not represented there, nor here.
import type { ResourceDefinition } from './definition.ts';
import { NETWORK_NAMESPACE } from './hostname-status.ts';
import { FAMILY, ROUTE_FLAGS, ROUTE_PROTOCOL, ROUTE_TYPE, ROUTING_TABLE, SCOPE } from './net.ts';

export interface RouteStatusSpec {
  family: string;
  /** '' for a default route. */
  dst: string;
  /** The preferred source address, '' for none. */
  src: string;
  gateway: string;
  outLinkIndex?: number;
  outLinkName?: string;
  /** ROUTING_TABLE's name ('main') or the number. */
  table: string;
  priority: number;
  scope: string;
  type: string;
  /** ROUTE_FLAGS. */
  flags: string;
  protocol: string;
  mtu?: number;
}

export const ROUTE_STATUS_TYPE = 'RouteStatuses.net.talos.dev';

export const routeStatusDefinition: ResourceDefinition<RouteStatusSpec> = {
  type: ROUTE_STATUS_TYPE,
  displayType: 'RouteStatus',
  aliases: ['route', 'routes'],
  defaultNamespace: NETWORK_NAMESPACE,
  owner: 'networkd',
  printColumns: [
    { name: 'Destination', jsonPath: '{.dst}' },
    { name: 'Gateway', jsonPath: '{.gateway}' },
    { name: 'Link', jsonPath: '{.outLinkName}' },
    { name: 'Metric', jsonPath: '{.priority}' },
    { name: 'Table', jsonPath: '{.table}' },
  ],
  proto: {
    message: 'talos.resource.definitions.network.RouteStatusSpec',
    fields: {
      family: { as: FAMILY },
      destination: { from: 'dst' },
      source: { from: 'src' },
      table: { as: ROUTING_TABLE },
      scope: { as: SCOPE },
      type: { as: ROUTE_TYPE },
      flags: { as: ROUTE_FLAGS },
      protocol: { as: ROUTE_PROTOCOL },
    },
  },
};
