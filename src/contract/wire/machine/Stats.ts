// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { Stat as _machine_Stat, Stat__Output as _machine_Stat__Output } from '../machine/Stat.ts';

export interface Stats {
  'metadata'?: (_common_Metadata | null);
  'stats'?: (_machine_Stat)[];
}

export interface Stats__Output {
  'metadata': (_common_Metadata__Output | null);
  'stats': (_machine_Stat__Output)[];
}
