// Original file: protos/machine/machine.proto

import type { Error as _common_Error, Error__Output as _common_Error__Output } from '../common/Error.ts';

// Original file: protos/machine/machine.proto

export const _machine_SequenceEvent_Action = {
  NOOP: 'NOOP',
  START: 'START',
  STOP: 'STOP',
} as const;

export type _machine_SequenceEvent_Action =
  | 'NOOP'
  | 0
  | 'START'
  | 1
  | 'STOP'
  | 2

export type _machine_SequenceEvent_Action__Output = typeof _machine_SequenceEvent_Action[keyof typeof _machine_SequenceEvent_Action]

export interface SequenceEvent {
  'sequence'?: (string);
  'action'?: (_machine_SequenceEvent_Action);
  'error'?: (_common_Error | null);
}

export interface SequenceEvent__Output {
  'sequence': (string);
  'action': (_machine_SequenceEvent_Action__Output);
  'error': (_common_Error__Output | null);
}
