// Original file: protos/etcd/rpc.proto

import type { ResponseHeader as _etcdserverpb_ResponseHeader, ResponseHeader__Output as _etcdserverpb_ResponseHeader__Output } from '../etcdserverpb/ResponseHeader.ts';
import type { Long } from '@grpc/proto-loader';

export interface LeaseKeepAliveResponse {
  'header'?: (_etcdserverpb_ResponseHeader | null);
  'ID'?: (number | string | Long);
  'TTL'?: (number | string | Long);
}

export interface LeaseKeepAliveResponse__Output {
  'header': (_etcdserverpb_ResponseHeader__Output | null);
  'ID': (string);
  'TTL': (string);
}
