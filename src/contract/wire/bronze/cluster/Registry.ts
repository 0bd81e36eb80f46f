// Original file: protos/bronze/cluster/registry.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { HelloRequest as _bronze_cluster_HelloRequest, HelloRequest__Output as _bronze_cluster_HelloRequest__Output } from '../../bronze/cluster/HelloRequest.ts';
import type { HelloResponse as _bronze_cluster_HelloResponse, HelloResponse__Output as _bronze_cluster_HelloResponse__Output } from '../../bronze/cluster/HelloResponse.ts';

export interface RegistryDefinition {
  Hello: MethodDefinition<_bronze_cluster_HelloRequest, _bronze_cluster_HelloResponse, _bronze_cluster_HelloRequest__Output, _bronze_cluster_HelloResponse__Output>
}
