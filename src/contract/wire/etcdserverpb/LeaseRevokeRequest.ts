// Original file: protos/etcd/rpc.proto

import type { Long } from '@grpc/proto-loader';

export interface LeaseRevokeRequest {
  'ID'?: (number | string | Long);
}

export interface LeaseRevokeRequest__Output {
  'ID': (string);
}
