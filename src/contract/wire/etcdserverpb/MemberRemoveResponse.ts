// Original file: protos/etcd/rpc.proto

import type { ResponseHeader as _etcdserverpb_ResponseHeader, ResponseHeader__Output as _etcdserverpb_ResponseHeader__Output } from '../etcdserverpb/ResponseHeader.ts';
import type { Member as _etcdserverpb_Member, Member__Output as _etcdserverpb_Member__Output } from '../etcdserverpb/Member.ts';

export interface MemberRemoveResponse {
  'header'?: (_etcdserverpb_ResponseHeader | null);
  'members'?: (_etcdserverpb_Member)[];
}

export interface MemberRemoveResponse__Output {
  'header': (_etcdserverpb_ResponseHeader__Output | null);
  'members': (_etcdserverpb_Member__Output)[];
}
