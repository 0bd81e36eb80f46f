// Original file: protos/machine/machine.proto

import type { MetaWrite as _machine_MetaWrite, MetaWrite__Output as _machine_MetaWrite__Output } from '../machine/MetaWrite.ts';

export interface MetaWriteResponse {
  'messages'?: (_machine_MetaWrite)[];
}

export interface MetaWriteResponse__Output {
  'messages': (_machine_MetaWrite__Output)[];
}
