// Original file: protos/bronze/cluster/registry.proto

import type { MemberSpec as _talos_resource_definitions_cluster_MemberSpec, MemberSpec__Output as _talos_resource_definitions_cluster_MemberSpec__Output } from '../../talos/resource/definitions/cluster/MemberSpec.ts';
import type { Long } from '@grpc/proto-loader';

export interface HelloRequest {
  'member'?: (_talos_resource_definitions_cluster_MemberSpec | null);
  'ttl_seconds'?: (number | string | Long);
}

export interface HelloRequest__Output {
  'member': (_talos_resource_definitions_cluster_MemberSpec__Output | null);
  'ttl_seconds': (string);
}
