// Original file: protos/common/common.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';

export interface Data {
  'metadata'?: (_common_Metadata | null);
  'bytes'?: (Buffer | Uint8Array | string);
}

export interface Data__Output {
  'metadata': (_common_Metadata__Output | null);
  'bytes': (Buffer);
}
