// Original file: protos/etcd/rpc.proto

import type { ResponseHeader as _etcdserverpb_ResponseHeader, ResponseHeader__Output as _etcdserverpb_ResponseHeader__Output } from '../etcdserverpb/ResponseHeader.ts';
import type { Member as _etcdserverpb_Member, Member__Output as _etcdserverpb_Member__Output } from '../etcdserverpb/Member.ts';

export interface MemberAddResponse {
  'header'?: (_etcdserverpb_ResponseHeader | null);
  'member'?: (_etcdserverpb_Member | null);
  'members'?: (_etcdserverpb_Member)[];
}

export interface MemberAddResponse__Output {
  'header': (_etcdserverpb_ResponseHeader__Output | null);
  'member': (_etcdserverpb_Member__Output | null);
  'members': (_etcdserverpb_Member__Output)[];
}
