// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';

export interface Hostname {
  'metadata'?: (_common_Metadata | null);
  'hostname'?: (string);
}

export interface Hostname__Output {
  'metadata': (_common_Metadata__Output | null);
  'hostname': (string);
}
