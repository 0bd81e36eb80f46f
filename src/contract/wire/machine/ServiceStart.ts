// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';

export interface ServiceStart {
  'metadata'?: (_common_Metadata | null);
  'resp'?: (string);
}

export interface ServiceStart__Output {
  'metadata': (_common_Metadata__Output | null);
  'resp': (string);
}
