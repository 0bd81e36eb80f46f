// Original file: protos/resource/definitions/network/network.proto

import type { NethelpersLinkType as _talos_resource_definitions_enums_NethelpersLinkType, NethelpersLinkType__Output as _talos_resource_definitions_enums_NethelpersLinkType__Output } from '../../../../talos/resource/definitions/enums/NethelpersLinkType.ts';
import type { NethelpersOperationalState as _talos_resource_definitions_enums_NethelpersOperationalState, NethelpersOperationalState__Output as _talos_resource_definitions_enums_NethelpersOperationalState__Output } from '../../../../talos/resource/definitions/enums/NethelpersOperationalState.ts';
import type { NethelpersPort as _talos_resource_definitions_enums_NethelpersPort, NethelpersPort__Output as _talos_resource_definitions_enums_NethelpersPort__Output } from '../../../../talos/resource/definitions/enums/NethelpersPort.ts';
import type { NethelpersDuplex as _talos_resource_definitions_enums_NethelpersDuplex, NethelpersDuplex__Output as _talos_resource_definitions_enums_NethelpersDuplex__Output } from '../../../../talos/resource/definitions/enums/NethelpersDuplex.ts';
import type { VLANSpec as _talos_resource_definitions_network_VLANSpec, VLANSpec__Output as _talos_resource_definitions_network_VLANSpec__Output } from '../../../../talos/resource/definitions/network/VLANSpec.ts';
import type { BridgeMasterSpec as _talos_resource_definitions_network_BridgeMasterSpec, BridgeMasterSpec__Output as _talos_resource_definitions_network_BridgeMasterSpec__Output } from '../../../../talos/resource/definitions/network/BridgeMasterSpec.ts';
import type { BondMasterSpec as _talos_resource_definitions_network_BondMasterSpec, BondMasterSpec__Output as _talos_resource_definitions_network_BondMasterSpec__Output } from '../../../../talos/resource/definitions/network/BondMasterSpec.ts';
import type { WireguardSpec as _talos_resource_definitions_network_WireguardSpec, WireguardSpec__Output as _talos_resource_definitions_network_WireguardSpec__Output } from '../../../../talos/resource/definitions/network/WireguardSpec.ts';
import type { VRFMasterSpec as _talos_resource_definitions_network_VRFMasterSpec, VRFMasterSpec__Output as _talos_resource_definitions_network_VRFMasterSpec__Output } from '../../../../talos/resource/definitions/network/VRFMasterSpec.ts';
import type { Long } from '@grpc/proto-loader';

export interface LinkStatusSpec {
  'index'?: (number);
  'type'?: (_talos_resource_definitions_enums_NethelpersLinkType);
  'link_index'?: (number);
  'flags'?: (number);
  'hardware_addr'?: (Buffer | Uint8Array | string);
  'broadcast_addr'?: (Buffer | Uint8Array | string);
  'mtu'?: (number);
  'queue_disc'?: (string);
  'master_index'?: (number);
  'operational_state'?: (_talos_resource_definitions_enums_NethelpersOperationalState);
  'kind'?: (string);
  'slave_kind'?: (string);
  'bus_path'?: (string);
  'pciid'?: (string);
  'driver'?: (string);
  'driver_version'?: (string);
  'firmware_version'?: (string);
  'product_id'?: (string);
  'vendor_id'?: (string);
  'product'?: (string);
  'vendor'?: (string);
  'link_state'?: (boolean);
  'speed_megabits'?: (number | string | Long);
  'port'?: (_talos_resource_definitions_enums_NethelpersPort);
  'duplex'?: (_talos_resource_definitions_enums_NethelpersDuplex);
  'vlan'?: (_talos_resource_definitions_network_VLANSpec | null);
  'bridge_master'?: (_talos_resource_definitions_network_BridgeMasterSpec | null);
  'bond_master'?: (_talos_resource_definitions_network_BondMasterSpec | null);
  'wireguard'?: (_talos_resource_definitions_network_WireguardSpec | null);
  'permanent_addr'?: (Buffer | Uint8Array | string);
  'alias'?: (string);
  'alt_names'?: (string)[];
  'vrf_master'?: (_talos_resource_definitions_network_VRFMasterSpec | null);
}

export interface LinkStatusSpec__Output {
  'index': (number);
  'type': (_talos_resource_definitions_enums_NethelpersLinkType__Output);
  'link_index': (number);
  'flags': (number);
  'hardware_addr': (Buffer);
  'broadcast_addr': (Buffer);
  'mtu': (number);
  'queue_disc': (string);
  'master_index': (number);
  'operational_state': (_talos_resource_definitions_enums_NethelpersOperationalState__Output);
  'kind': (string);
  'slave_kind': (string);
  'bus_path': (string);
  'pciid': (string);
  'driver': (string);
  'driver_version': (string);
  'firmware_version': (string);
  'product_id': (string);
  'vendor_id': (string);
  'product': (string);
  'vendor': (string);
  'link_state': (boolean);
  'speed_megabits': (string);
  'port': (_talos_resource_definitions_enums_NethelpersPort__Output);
  'duplex': (_talos_resource_definitions_enums_NethelpersDuplex__Output);
  'vlan': (_talos_resource_definitions_network_VLANSpec__Output | null);
  'bridge_master': (_talos_resource_definitions_network_BridgeMasterSpec__Output | null);
  'bond_master': (_talos_resource_definitions_network_BondMasterSpec__Output | null);
  'wireguard': (_talos_resource_definitions_network_WireguardSpec__Output | null);
  'permanent_addr': (Buffer);
  'alias': (string);
  'alt_names': (string)[];
  'vrf_master': (_talos_resource_definitions_network_VRFMasterSpec__Output | null);
}
