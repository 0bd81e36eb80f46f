// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { MemInfo as _machine_MemInfo, MemInfo__Output as _machine_MemInfo__Output } from '../machine/MemInfo.ts';

export interface Memory {
  'metadata'?: (_common_Metadata | null);
  'meminfo'?: (_machine_MemInfo | null);
}

export interface Memory__Output {
  'metadata': (_common_Metadata__Output | null);
  'meminfo': (_machine_MemInfo__Output | null);
}
