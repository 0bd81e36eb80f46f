// Original file: protos/machine/machine.proto

import type { Rollback as _machine_Rollback, Rollback__Output as _machine_Rollback__Output } from '../machine/Rollback.ts';

export interface RollbackResponse {
  'messages'?: (_machine_Rollback)[];
}

export interface RollbackResponse__Output {
  'messages': (_machine_Rollback__Output)[];
}
