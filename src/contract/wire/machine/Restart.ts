// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';

export interface Restart {
  'metadata'?: (_common_Metadata | null);
}

export interface Restart__Output {
  'metadata': (_common_Metadata__Output | null);
}
