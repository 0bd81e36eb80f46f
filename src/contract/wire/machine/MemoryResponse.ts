// Original file: protos/machine/machine.proto

import type { Memory as _machine_Memory, Memory__Output as _machine_Memory__Output } from '../machine/Memory.ts';

export interface MemoryResponse {
  'messages'?: (_machine_Memory)[];
}

export interface MemoryResponse__Output {
  'messages': (_machine_Memory__Output)[];
}
