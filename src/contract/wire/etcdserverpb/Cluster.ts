// Original file: protos/etcd/rpc.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { MemberAddRequest as _etcdserverpb_MemberAddRequest, MemberAddRequest__Output as _etcdserverpb_MemberAddRequest__Output } from '../etcdserverpb/MemberAddRequest.ts';
import type { MemberAddResponse as _etcdserverpb_MemberAddResponse, MemberAddResponse__Output as _etcdserverpb_MemberAddResponse__Output } from '../etcdserverpb/MemberAddResponse.ts';
import type { MemberListRequest as _etcdserverpb_MemberListRequest, MemberListRequest__Output as _etcdserverpb_MemberListRequest__Output } from '../etcdserverpb/MemberListRequest.ts';
import type { MemberListResponse as _etcdserverpb_MemberListResponse, MemberListResponse__Output as _etcdserverpb_MemberListResponse__Output } from '../etcdserverpb/MemberListResponse.ts';
import type { MemberPromoteRequest as _etcdserverpb_MemberPromoteRequest, MemberPromoteRequest__Output as _etcdserverpb_MemberPromoteRequest__Output } from '../etcdserverpb/MemberPromoteRequest.ts';
import type { MemberPromoteResponse as _etcdserverpb_MemberPromoteResponse, MemberPromoteResponse__Output as _etcdserverpb_MemberPromoteResponse__Output } from '../etcdserverpb/MemberPromoteResponse.ts';
import type { MemberRemoveRequest as _etcdserverpb_MemberRemoveRequest, MemberRemoveRequest__Output as _etcdserverpb_MemberRemoveRequest__Output } from '../etcdserverpb/MemberRemoveRequest.ts';
import type { MemberRemoveResponse as _etcdserverpb_MemberRemoveResponse, MemberRemoveResponse__Output as _etcdserverpb_MemberRemoveResponse__Output } from '../etcdserverpb/MemberRemoveResponse.ts';

export interface ClusterDefinition {
  MemberAdd: MethodDefinition<_etcdserverpb_MemberAddRequest, _etcdserverpb_MemberAddResponse, _etcdserverpb_MemberAddRequest__Output, _etcdserverpb_MemberAddResponse__Output>
  MemberList: MethodDefinition<_etcdserverpb_MemberListRequest, _etcdserverpb_MemberListResponse, _etcdserverpb_MemberListRequest__Output, _etcdserverpb_MemberListResponse__Output>
  MemberPromote: MethodDefinition<_etcdserverpb_MemberPromoteRequest, _etcdserverpb_MemberPromoteResponse, _etcdserverpb_MemberPromoteRequest__Output, _etcdserverpb_MemberPromoteResponse__Output>
  MemberRemove: MethodDefinition<_etcdserverpb_MemberRemoveRequest, _etcdserverpb_MemberRemoveResponse, _etcdserverpb_MemberRemoveRequest__Output, _etcdserverpb_MemberRemoveResponse__Output>
}
