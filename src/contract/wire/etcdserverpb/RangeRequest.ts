// Original file: protos/etcd/rpc.proto

import type { Long } from '@grpc/proto-loader';

export interface RangeRequest {
  'key'?: (Buffer | Uint8Array | string);
  'range_end'?: (Buffer | Uint8Array | string);
  'limit'?: (number | string | Long);
  'serializable'?: (boolean);
  'keys_only'?: (boolean);
  'count_only'?: (boolean);
}

export interface RangeRequest__Output {
  'key': (Buffer);
  'range_end': (Buffer);
  'limit': (string);
  'serializable': (boolean);
  'keys_only': (boolean);
  'count_only': (boolean);
}
