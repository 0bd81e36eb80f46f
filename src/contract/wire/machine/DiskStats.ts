// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { DiskStat as _machine_DiskStat, DiskStat__Output as _machine_DiskStat__Output } from '../machine/DiskStat.ts';

export interface DiskStats {
  'metadata'?: (_common_Metadata | null);
  'total'?: (_machine_DiskStat | null);
  'devices'?: (_machine_DiskStat)[];
}

export interface DiskStats__Output {
  'metadata': (_common_Metadata__Output | null);
  'total': (_machine_DiskStat__Output | null);
  'devices': (_machine_DiskStat__Output)[];
}
