// Original file: protos/machine/machine.proto


// Original file: protos/machine/machine.proto

export const _machine_PhaseEvent_Action = {
  START: 'START',
  STOP: 'STOP',
} as const;

export type _machine_PhaseEvent_Action =
  | 'START'
  | 0
  | 'STOP'
  | 1

export type _machine_PhaseEvent_Action__Output = typeof _machine_PhaseEvent_Action[keyof typeof _machine_PhaseEvent_Action]

export interface PhaseEvent {
  'phase'?: (string);
  'action'?: (_machine_PhaseEvent_Action);
}

export interface PhaseEvent__Output {
  'phase': (string);
  'action': (_machine_PhaseEvent_Action__Output);
}
