// Original file: protos/etcd/rpc.proto

import type { ResponseHeader as _etcdserverpb_ResponseHeader, ResponseHeader__Output as _etcdserverpb_ResponseHeader__Output } from '../etcdserverpb/ResponseHeader.ts';
import type { KeyValue as _mvccpb_KeyValue, KeyValue__Output as _mvccpb_KeyValue__Output } from '../mvccpb/KeyValue.ts';
import type { Long } from '@grpc/proto-loader';

export interface RangeResponse {
  'header'?: (_etcdserverpb_ResponseHeader | null);
  'kvs'?: (_mvccpb_KeyValue)[];
  'more'?: (boolean);
  'count'?: (number | string | Long);
}

export interface RangeResponse__Output {
  'header': (_etcdserverpb_ResponseHeader__Output | null);
  'kvs': (_mvccpb_KeyValue__Output)[];
  'more': (boolean);
  'count': (string);
}
