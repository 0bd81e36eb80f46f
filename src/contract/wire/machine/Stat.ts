// Original file: protos/machine/machine.proto

import type { Long } from '@grpc/proto-loader';

export interface Stat {
  'namespace'?: (string);
  'id'?: (string);
  'memory_usage'?: (number | string | Long);
  'cpu_usage'?: (number | string | Long);
  'pod_id'?: (string);
  'name'?: (string);
}

export interface Stat__Output {
  'namespace': (string);
  'id': (string);
  'memory_usage': (string);
  'cpu_usage': (string);
  'pod_id': (string);
  'name': (string);
}
