// Original file: protos/bronze/cluster/registry.proto

import type { MemberSpec as _talos_resource_definitions_cluster_MemberSpec, MemberSpec__Output as _talos_resource_definitions_cluster_MemberSpec__Output } from '../../talos/resource/definitions/cluster/MemberSpec.ts';

export interface HelloResponse {
  'members'?: (_talos_resource_definitions_cluster_MemberSpec)[];
}

export interface HelloResponse__Output {
  'members': (_talos_resource_definitions_cluster_MemberSpec__Output)[];
}
