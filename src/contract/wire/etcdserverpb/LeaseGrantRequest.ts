// Original file: protos/etcd/rpc.proto

import type { Long } from '@grpc/proto-loader';

export interface LeaseGrantRequest {
  'TTL'?: (number | string | Long);
  'ID'?: (number | string | Long);
}

export interface LeaseGrantRequest__Output {
  'TTL': (string);
  'ID': (string);
}
