// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { MountStat as _machine_MountStat, MountStat__Output as _machine_MountStat__Output } from '../machine/MountStat.ts';

export interface Mounts {
  'metadata'?: (_common_Metadata | null);
  'stats'?: (_machine_MountStat)[];
}

export interface Mounts__Output {
  'metadata': (_common_Metadata__Output | null);
  'stats': (_machine_MountStat__Output)[];
}
