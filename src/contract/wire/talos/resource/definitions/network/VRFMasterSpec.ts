// Original file: protos/resource/definitions/network/network.proto

import type { NethelpersRoutingTable as _talos_resource_definitions_enums_NethelpersRoutingTable, NethelpersRoutingTable__Output as _talos_resource_definitions_enums_NethelpersRoutingTable__Output } from '../../../../talos/resource/definitions/enums/NethelpersRoutingTable.ts';

export interface VRFMasterSpec {
  'table'?: (_talos_resource_definitions_enums_NethelpersRoutingTable);
}

export interface VRFMasterSpec__Output {
  'table': (_talos_resource_definitions_enums_NethelpersRoutingTable__Output);
}
