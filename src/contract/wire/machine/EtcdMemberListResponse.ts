// Original file: protos/machine/machine.proto

import type { EtcdMembers as _machine_EtcdMembers, EtcdMembers__Output as _machine_EtcdMembers__Output } from '../machine/EtcdMembers.ts';

export interface EtcdMemberListResponse {
  'messages'?: (_machine_EtcdMembers)[];
}

export interface EtcdMemberListResponse__Output {
  'messages': (_machine_EtcdMembers__Output)[];
}
