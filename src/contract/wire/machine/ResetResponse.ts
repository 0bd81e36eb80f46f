// Original file: protos/machine/machine.proto

import type { Reset as _machine_Reset, Reset__Output as _machine_Reset__Output } from '../machine/Reset.ts';

export interface ResetResponse {
  'messages'?: (_machine_Reset)[];
}

export interface ResetResponse__Output {
  'messages': (_machine_Reset__Output)[];
}
