// Original file: protos/etcd/rpc.proto

import type { Long } from '@grpc/proto-loader';

export interface MoveLeaderRequest {
  'targetID'?: (number | string | Long);
}

export interface MoveLeaderRequest__Output {
  'targetID': (string);
}
