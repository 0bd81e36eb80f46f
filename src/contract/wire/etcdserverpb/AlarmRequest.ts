// Original file: protos/etcd/rpc.proto

import type { AlarmType as _etcdserverpb_AlarmType, AlarmType__Output as _etcdserverpb_AlarmType__Output } from '../etcdserverpb/AlarmType.ts';
import type { Long } from '@grpc/proto-loader';

// Original file: protos/etcd/rpc.proto

export const _etcdserverpb_AlarmRequest_AlarmAction = {
  GET: 'GET',
  ACTIVATE: 'ACTIVATE',
  DEACTIVATE: 'DEACTIVATE',
} as const;

export type _etcdserverpb_AlarmRequest_AlarmAction =
  | 'GET'
  | 0
  | 'ACTIVATE'
  | 1
  | 'DEACTIVATE'
  | 2

export type _etcdserverpb_AlarmRequest_AlarmAction__Output = typeof _etcdserverpb_AlarmRequest_AlarmAction[keyof typeof _etcdserverpb_AlarmRequest_AlarmAction]

export interface AlarmRequest {
  'action'?: (_etcdserverpb_AlarmRequest_AlarmAction);
  'memberID'?: (number | string | Long);
  'alarm'?: (_etcdserverpb_AlarmType);
}

export interface AlarmRequest__Output {
  'action': (_etcdserverpb_AlarmRequest_AlarmAction__Output);
  'memberID': (string);
  'alarm': (_etcdserverpb_AlarmType__Output);
}
