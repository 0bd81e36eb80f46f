// Original file: protos/machine/machine.proto

import type { EtcdAlarmDisarm as _machine_EtcdAlarmDisarm, EtcdAlarmDisarm__Output as _machine_EtcdAlarmDisarm__Output } from '../machine/EtcdAlarmDisarm.ts';

export interface EtcdAlarmDisarmResponse {
  'messages'?: (_machine_EtcdAlarmDisarm)[];
}

export interface EtcdAlarmDisarmResponse__Output {
  'messages': (_machine_EtcdAlarmDisarm__Output)[];
}
