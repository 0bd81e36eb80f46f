// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { EtcdMemberStatus as _machine_EtcdMemberStatus, EtcdMemberStatus__Output as _machine_EtcdMemberStatus__Output } from '../machine/EtcdMemberStatus.ts';

export interface EtcdStatus {
  'metadata'?: (_common_Metadata | null);
  'member_status'?: (_machine_EtcdMemberStatus | null);
}

export interface EtcdStatus__Output {
  'metadata': (_common_Metadata__Output | null);
  'member_status': (_machine_EtcdMemberStatus__Output | null);
}
