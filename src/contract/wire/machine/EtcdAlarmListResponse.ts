// Original file: protos/machine/machine.proto

import type { EtcdAlarm as _machine_EtcdAlarm, EtcdAlarm__Output as _machine_EtcdAlarm__Output } from '../machine/EtcdAlarm.ts';

export interface EtcdAlarmListResponse {
  'messages'?: (_machine_EtcdAlarm)[];
}

export interface EtcdAlarmListResponse__Output {
  'messages': (_machine_EtcdAlarm__Output)[];
}
