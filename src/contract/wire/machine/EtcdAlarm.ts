// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { EtcdMemberAlarm as _machine_EtcdMemberAlarm, EtcdMemberAlarm__Output as _machine_EtcdMemberAlarm__Output } from '../machine/EtcdMemberAlarm.ts';

export interface EtcdAlarm {
  'metadata'?: (_common_Metadata | null);
  'member_alarms'?: (_machine_EtcdMemberAlarm)[];
}

export interface EtcdAlarm__Output {
  'metadata': (_common_Metadata__Output | null);
  'member_alarms': (_machine_EtcdMemberAlarm__Output)[];
}
