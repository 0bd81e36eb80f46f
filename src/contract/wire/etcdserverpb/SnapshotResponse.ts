// Original file: protos/etcd/rpc.proto

import type { ResponseHeader as _etcdserverpb_ResponseHeader, ResponseHeader__Output as _etcdserverpb_ResponseHeader__Output } from '../etcdserverpb/ResponseHeader.ts';
import type { Long } from '@grpc/proto-loader';

export interface SnapshotResponse {
  'header'?: (_etcdserverpb_ResponseHeader | null);
  'remaining_bytes'?: (number | string | Long);
  'blob'?: (Buffer | Uint8Array | string);
}

export interface SnapshotResponse__Output {
  'header': (_etcdserverpb_ResponseHeader__Output | null);
  'remaining_bytes': (string);
  'blob': (Buffer);
}
