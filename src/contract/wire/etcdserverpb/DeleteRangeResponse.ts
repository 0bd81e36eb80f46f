// Original file: protos/etcd/rpc.proto

import type { ResponseHeader as _etcdserverpb_ResponseHeader, ResponseHeader__Output as _etcdserverpb_ResponseHeader__Output } from '../etcdserverpb/ResponseHeader.ts';
import type { Long } from '@grpc/proto-loader';

export interface DeleteRangeResponse {
  'header'?: (_etcdserverpb_ResponseHeader | null);
  'deleted'?: (number | string | Long);
}

export interface DeleteRangeResponse__Output {
  'header': (_etcdserverpb_ResponseHeader__Output | null);
  'deleted': (string);
}
