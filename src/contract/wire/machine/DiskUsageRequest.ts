// Original file: protos/machine/machine.proto

import type { Long } from '@grpc/proto-loader';

export interface DiskUsageRequest {
  'recursion_depth'?: (number);
  'all'?: (boolean);
  'threshold'?: (number | string | Long);
  'paths'?: (string)[];
}

export interface DiskUsageRequest__Output {
  'recursion_depth': (number);
  'all': (boolean);
  'threshold': (string);
  'paths': (string)[];
}
