// Original file: protos/etcd/rpc.proto

import type { AlarmType as _etcdserverpb_AlarmType, AlarmType__Output as _etcdserverpb_AlarmType__Output } from '../etcdserverpb/AlarmType.ts';
import type { Long } from '@grpc/proto-loader';

export interface AlarmMember {
  'memberID'?: (number | string | Long);
  'alarm'?: (_etcdserverpb_AlarmType);
}

export interface AlarmMember__Output {
  'memberID': (string);
  'alarm': (_etcdserverpb_AlarmType__Output);
}
