// Original file: protos/resource/definitions/network/network.proto

import type { STPSpec as _talos_resource_definitions_network_STPSpec, STPSpec__Output as _talos_resource_definitions_network_STPSpec__Output } from '../../../../talos/resource/definitions/network/STPSpec.ts';
import type { BridgeVLANSpec as _talos_resource_definitions_network_BridgeVLANSpec, BridgeVLANSpec__Output as _talos_resource_definitions_network_BridgeVLANSpec__Output } from '../../../../talos/resource/definitions/network/BridgeVLANSpec.ts';

export interface BridgeMasterSpec {
  'stp'?: (_talos_resource_definitions_network_STPSpec | null);
  'vlan'?: (_talos_resource_definitions_network_BridgeVLANSpec | null);
}

export interface BridgeMasterSpec__Output {
  'stp': (_talos_resource_definitions_network_STPSpec__Output | null);
  'vlan': (_talos_resource_definitions_network_BridgeVLANSpec__Output | null);
}
