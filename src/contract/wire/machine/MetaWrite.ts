// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';

export interface MetaWrite {
  'metadata'?: (_common_Metadata | null);
}

export interface MetaWrite__Output {
  'metadata': (_common_Metadata__Output | null);
}
