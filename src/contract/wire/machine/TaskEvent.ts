// Original file: protos/machine/machine.proto


// Original file: protos/machine/machine.proto

export const _machine_TaskEvent_Action = {
  START: 'START',
  STOP: 'STOP',
} as const;

export type _machine_TaskEvent_Action =
  | 'START'
  | 0
  | 'STOP'
  | 1

export type _machine_TaskEvent_Action__Output = typeof _machine_TaskEvent_Action[keyof typeof _machine_TaskEvent_Action]

export interface TaskEvent {
  'task'?: (string);
  'action'?: (_machine_TaskEvent_Action);
}

export interface TaskEvent__Output {
  'task': (string);
  'action': (_machine_TaskEvent_Action__Output);
}
