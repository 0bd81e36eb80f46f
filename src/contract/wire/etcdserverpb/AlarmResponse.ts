// Original file: protos/etcd/rpc.proto

import type { ResponseHeader as _etcdserverpb_ResponseHeader, ResponseHeader__Output as _etcdserverpb_ResponseHeader__Output } from '../etcdserverpb/ResponseHeader.ts';
import type { AlarmMember as _etcdserverpb_AlarmMember, AlarmMember__Output as _etcdserverpb_AlarmMember__Output } from '../etcdserverpb/AlarmMember.ts';

export interface AlarmResponse {
  'header'?: (_etcdserverpb_ResponseHeader | null);
  'alarms'?: (_etcdserverpb_AlarmMember)[];
}

export interface AlarmResponse__Output {
  'header': (_etcdserverpb_ResponseHeader__Output | null);
  'alarms': (_etcdserverpb_AlarmMember__Output)[];
}
