// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';

export interface Shutdown {
  'metadata'?: (_common_Metadata | null);
  'actor_id'?: (string);
}

export interface Shutdown__Output {
  'metadata': (_common_Metadata__Output | null);
  'actor_id': (string);
}
