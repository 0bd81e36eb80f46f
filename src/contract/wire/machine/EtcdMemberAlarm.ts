// Original file: protos/machine/machine.proto

import type { Long } from '@grpc/proto-loader';

// Original file: protos/machine/machine.proto

export const _machine_EtcdMemberAlarm_AlarmType = {
  NONE: 'NONE',
  NOSPACE: 'NOSPACE',
  CORRUPT: 'CORRUPT',
} as const;

export type _machine_EtcdMemberAlarm_AlarmType =
  | 'NONE'
  | 0
  | 'NOSPACE'
  | 1
  | 'CORRUPT'
  | 2

export type _machine_EtcdMemberAlarm_AlarmType__Output = typeof _machine_EtcdMemberAlarm_AlarmType[keyof typeof _machine_EtcdMemberAlarm_AlarmType]

export interface EtcdMemberAlarm {
  'member_id'?: (number | string | Long);
  'alarm'?: (_machine_EtcdMemberAlarm_AlarmType);
}

export interface EtcdMemberAlarm__Output {
  'member_id': (string);
  'alarm': (_machine_EtcdMemberAlarm_AlarmType__Output);
}
