// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';

export interface Upgrade {
  'metadata'?: (_common_Metadata | null);
  'ack'?: (string);
  'actor_id'?: (string);
}

export interface Upgrade__Output {
  'metadata': (_common_Metadata__Output | null);
  'ack': (string);
  'actor_id': (string);
}
