// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';

export interface GenerateClientConfiguration {
  'metadata'?: (_common_Metadata | null);
  'ca'?: (Buffer | Uint8Array | string);
  'crt'?: (Buffer | Uint8Array | string);
  'key'?: (Buffer | Uint8Array | string);
  'talosconfig'?: (Buffer | Uint8Array | string);
}

export interface GenerateClientConfiguration__Output {
  'metadata': (_common_Metadata__Output | null);
  'ca': (Buffer);
  'crt': (Buffer);
  'key': (Buffer);
  'talosconfig': (Buffer);
}
