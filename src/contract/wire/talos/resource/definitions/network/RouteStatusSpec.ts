// Original file: protos/resource/definitions/network/network.proto

import type { NethelpersFamily as _talos_resource_definitions_enums_NethelpersFamily, NethelpersFamily__Output as _talos_resource_definitions_enums_NethelpersFamily__Output } from '../../../../talos/resource/definitions/enums/NethelpersFamily.ts';
import type { NetIPPrefix as _common_NetIPPrefix, NetIPPrefix__Output as _common_NetIPPrefix__Output } from '../../../../common/NetIPPrefix.ts';
import type { NetIP as _common_NetIP, NetIP__Output as _common_NetIP__Output } from '../../../../common/NetIP.ts';
import type { NethelpersRoutingTable as _talos_resource_definitions_enums_NethelpersRoutingTable, NethelpersRoutingTable__Output as _talos_resource_definitions_enums_NethelpersRoutingTable__Output } from '../../../../talos/resource/definitions/enums/NethelpersRoutingTable.ts';
import type { NethelpersScope as _talos_resource_definitions_enums_NethelpersScope, NethelpersScope__Output as _talos_resource_definitions_enums_NethelpersScope__Output } from '../../../../talos/resource/definitions/enums/NethelpersScope.ts';
import type { NethelpersRouteType as _talos_resource_definitions_enums_NethelpersRouteType, NethelpersRouteType__Output as _talos_resource_definitions_enums_NethelpersRouteType__Output } from '../../../../talos/resource/definitions/enums/NethelpersRouteType.ts';
import type { NethelpersRouteProtocol as _talos_resource_definitions_enums_NethelpersRouteProtocol, NethelpersRouteProtocol__Output as _talos_resource_definitions_enums_NethelpersRouteProtocol__Output } from '../../../../talos/resource/definitions/enums/NethelpersRouteProtocol.ts';

export interface RouteStatusSpec {
  'family'?: (_talos_resource_definitions_enums_NethelpersFamily);
  'destination'?: (_common_NetIPPrefix | null);
  'source'?: (_common_NetIP | null);
  'gateway'?: (_common_NetIP | null);
  'out_link_index'?: (number);
  'out_link_name'?: (string);
  'table'?: (_talos_resource_definitions_enums_NethelpersRoutingTable);
  'priority'?: (number);
  'scope'?: (_talos_resource_definitions_enums_NethelpersScope);
  'type'?: (_talos_resource_definitions_enums_NethelpersRouteType);
  'flags'?: (number);
  'protocol'?: (_talos_resource_definitions_enums_NethelpersRouteProtocol);
  'mtu'?: (number);
}

export interface RouteStatusSpec__Output {
  'family': (_talos_resource_definitions_enums_NethelpersFamily__Output);
  'destination': (_common_NetIPPrefix__Output | null);
  'source': (_common_NetIP__Output | null);
  'gateway': (_common_NetIP__Output | null);
  'out_link_index': (number);
  'out_link_name': (string);
  'table': (_talos_resource_definitions_enums_NethelpersRoutingTable__Output);
  'priority': (number);
  'scope': (_talos_resource_definitions_enums_NethelpersScope__Output);
  'type': (_talos_resource_definitions_enums_NethelpersRouteType__Output);
  'flags': (number);
  'protocol': (_talos_resource_definitions_enums_NethelpersRouteProtocol__Output);
  'mtu': (number);
}
