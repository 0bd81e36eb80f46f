// Original file: protos/etcd/rpc.proto

import type { Long } from '@grpc/proto-loader';

export interface PutRequest {
  'key'?: (Buffer | Uint8Array | string);
  'value'?: (Buffer | Uint8Array | string);
  'lease'?: (number | string | Long);
}

export interface PutRequest__Output {
  'key': (Buffer);
  'value': (Buffer);
  'lease': (string);
}
