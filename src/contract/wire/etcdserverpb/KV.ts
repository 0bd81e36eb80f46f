// Original file: protos/etcd/rpc.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { DeleteRangeRequest as _etcdserverpb_DeleteRangeRequest, DeleteRangeRequest__Output as _etcdserverpb_DeleteRangeRequest__Output } from '../etcdserverpb/DeleteRangeRequest.ts';
import type { DeleteRangeResponse as _etcdserverpb_DeleteRangeResponse, DeleteRangeResponse__Output as _etcdserverpb_DeleteRangeResponse__Output } from '../etcdserverpb/DeleteRangeResponse.ts';
import type { PutRequest as _etcdserverpb_PutRequest, PutRequest__Output as _etcdserverpb_PutRequest__Output } from '../etcdserverpb/PutRequest.ts';
import type { PutResponse as _etcdserverpb_PutResponse, PutResponse__Output as _etcdserverpb_PutResponse__Output } from '../etcdserverpb/PutResponse.ts';
import type { RangeRequest as _etcdserverpb_RangeRequest, RangeRequest__Output as _etcdserverpb_RangeRequest__Output } from '../etcdserverpb/RangeRequest.ts';
import type { RangeResponse as _etcdserverpb_RangeResponse, RangeResponse__Output as _etcdserverpb_RangeResponse__Output } from '../etcdserverpb/RangeResponse.ts';

export interface KVDefinition {
  DeleteRange: MethodDefinition<_etcdserverpb_DeleteRangeRequest, _etcdserverpb_DeleteRangeResponse, _etcdserverpb_DeleteRangeRequest__Output, _etcdserverpb_DeleteRangeResponse__Output>
  Put: MethodDefinition<_etcdserverpb_PutRequest, _etcdserverpb_PutResponse, _etcdserverpb_PutRequest__Output, _etcdserverpb_PutResponse__Output>
  Range: MethodDefinition<_etcdserverpb_RangeRequest, _etcdserverpb_RangeResponse, _etcdserverpb_RangeRequest__Output, _etcdserverpb_RangeResponse__Output>
}
