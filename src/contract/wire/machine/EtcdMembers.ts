// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { EtcdMember as _machine_EtcdMember, EtcdMember__Output as _machine_EtcdMember__Output } from '../machine/EtcdMember.ts';

export interface EtcdMembers {
  'metadata'?: (_common_Metadata | null);
  'legacy_members'?: (string)[];
  'members'?: (_machine_EtcdMember)[];
}

export interface EtcdMembers__Output {
  'metadata': (_common_Metadata__Output | null);
  'legacy_members': (string)[];
  'members': (_machine_EtcdMember__Output)[];
}
