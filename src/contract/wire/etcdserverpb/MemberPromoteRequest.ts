// Original file: protos/etcd/rpc.proto

import type { Long } from '@grpc/proto-loader';

export interface MemberPromoteRequest {
  'ID'?: (number | string | Long);
}

export interface MemberPromoteRequest__Output {
  'ID': (string);
}
