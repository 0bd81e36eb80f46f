// Original file: protos/machine/machine.proto

import type { ServiceHealth as _machine_ServiceHealth, ServiceHealth__Output as _machine_ServiceHealth__Output } from '../machine/ServiceHealth.ts';

// Original file: protos/machine/machine.proto

export const _machine_ServiceStateEvent_Action = {
  INITIALIZED: 'INITIALIZED',
  PREPARING: 'PREPARING',
  WAITING: 'WAITING',
  RUNNING: 'RUNNING',
  STOPPING: 'STOPPING',
  FINISHED: 'FINISHED',
  FAILED: 'FAILED',
  SKIPPED: 'SKIPPED',
  STARTING: 'STARTING',
} as const;

export type _machine_ServiceStateEvent_Action =
  | 'INITIALIZED'
  | 0
  | 'PREPARING'
  | 1
  | 'WAITING'
  | 2
  | 'RUNNING'
  | 3
  | 'STOPPING'
  | 4
  | 'FINISHED'
  | 5
  | 'FAILED'
  | 6
  | 'SKIPPED'
  | 7
  | 'STARTING'
  | 8

export type _machine_ServiceStateEvent_Action__Output = typeof _machine_ServiceStateEvent_Action[keyof typeof _machine_ServiceStateEvent_Action]

export interface ServiceStateEvent {
  'service'?: (string);
  'action'?: (_machine_ServiceStateEvent_Action);
  'message'?: (string);
  'health'?: (_machine_ServiceHealth | null);
}

export interface ServiceStateEvent__Output {
  'service': (string);
  'action': (_machine_ServiceStateEvent_Action__Output);
  'message': (string);
  'health': (_machine_ServiceHealth__Output | null);
}
