// Original file: protos/resource/definitions/cluster/cluster.proto

import type { NetIP as _common_NetIP, NetIP__Output as _common_NetIP__Output } from '../../../../common/NetIP.ts';
import type { MachineType as _talos_resource_definitions_enums_MachineType, MachineType__Output as _talos_resource_definitions_enums_MachineType__Output } from '../../../../talos/resource/definitions/enums/MachineType.ts';
import type { ControlPlane as _talos_resource_definitions_cluster_ControlPlane, ControlPlane__Output as _talos_resource_definitions_cluster_ControlPlane__Output } from '../../../../talos/resource/definitions/cluster/ControlPlane.ts';

export interface MemberSpec {
  'node_id'?: (string);
  'addresses'?: (_common_NetIP)[];
  'hostname'?: (string);
  'machine_type'?: (_talos_resource_definitions_enums_MachineType);
  'operating_system'?: (string);
  'control_plane'?: (_talos_resource_definitions_cluster_ControlPlane | null);
}

export interface MemberSpec__Output {
  'node_id': (string);
  'addresses': (_common_NetIP__Output)[];
  'hostname': (string);
  'machine_type': (_talos_resource_definitions_enums_MachineType__Output);
  'operating_system': (string);
  'control_plane': (_talos_resource_definitions_cluster_ControlPlane__Output | null);
}
