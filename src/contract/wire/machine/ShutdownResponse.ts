// Original file: protos/machine/machine.proto

import type { Shutdown as _machine_Shutdown, Shutdown__Output as _machine_Shutdown__Output } from '../machine/Shutdown.ts';

export interface ShutdownResponse {
  'messages'?: (_machine_Shutdown)[];
}

export interface ShutdownResponse__Output {
  'messages': (_machine_Shutdown__Output)[];
}
