// Original file: protos/machine/machine.proto

import type { Process as _machine_Process, Process__Output as _machine_Process__Output } from '../machine/Process.ts';

export interface ProcessesResponse {
  'messages'?: (_machine_Process)[];
}

export interface ProcessesResponse__Output {
  'messages': (_machine_Process__Output)[];
}
