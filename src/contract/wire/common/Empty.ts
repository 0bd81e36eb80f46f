// Original file: protos/common/common.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';

export interface Empty {
  'metadata'?: (_common_Metadata | null);
}

export interface Empty__Output {
  'metadata': (_common_Metadata__Output | null);
}
