// Original file: protos/etcd/rpc.proto

import type { ResponseHeader as _etcdserverpb_ResponseHeader, ResponseHeader__Output as _etcdserverpb_ResponseHeader__Output } from '../etcdserverpb/ResponseHeader.ts';

export interface DefragmentResponse {
  'header'?: (_etcdserverpb_ResponseHeader | null);
}

export interface DefragmentResponse__Output {
  'header': (_etcdserverpb_ResponseHeader__Output | null);
}
