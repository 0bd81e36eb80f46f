// Original file: protos/resource/definitions/containers/containers.proto

import type { Long } from '@grpc/proto-loader';

export interface ContainerResourcesSpec {
  'memory_limit'?: (number | string | Long);
  'cpu_limit'?: (number | string | Long);
}

export interface ContainerResourcesSpec__Output {
  'memory_limit': (string);
  'cpu_limit': (string);
}
