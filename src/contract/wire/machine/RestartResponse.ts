// Original file: protos/machine/machine.proto

import type { Restart as _machine_Restart, Restart__Output as _machine_Restart__Output } from '../machine/Restart.ts';

export interface RestartResponse {
  'messages'?: (_machine_Restart)[];
}

export interface RestartResponse__Output {
  'messages': (_machine_Restart__Output)[];
}
