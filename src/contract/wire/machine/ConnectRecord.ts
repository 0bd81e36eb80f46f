// Original file: protos/machine/machine.proto

import type { Long } from '@grpc/proto-loader';

export interface _machine_ConnectRecord_Process {
  'pid'?: (number);
  'name'?: (string);
}

export interface _machine_ConnectRecord_Process__Output {
  'pid': (number);
  'name': (string);
}

// Original file: protos/machine/machine.proto

export const _machine_ConnectRecord_State = {
  RESERVED: 'RESERVED',
  ESTABLISHED: 'ESTABLISHED',
  SYN_SENT: 'SYN_SENT',
  SYN_RECV: 'SYN_RECV',
  FIN_WAIT1: 'FIN_WAIT1',
  FIN_WAIT2: 'FIN_WAIT2',
  TIME_WAIT: 'TIME_WAIT',
  CLOSE: 'CLOSE',
  CLOSEWAIT: 'CLOSEWAIT',
  LASTACK: 'LASTACK',
  LISTEN: 'LISTEN',
  CLOSING: 'CLOSING',
} as const;

export type _machine_ConnectRecord_State =
  | 'RESERVED'
  | 0
  | 'ESTABLISHED'
  | 1
  | 'SYN_SENT'
  | 2
  | 'SYN_RECV'
  | 3
  | 'FIN_WAIT1'
  | 4
  | 'FIN_WAIT2'
  | 5
  | 'TIME_WAIT'
  | 6
  | 'CLOSE'
  | 7
  | 'CLOSEWAIT'
  | 8
  | 'LASTACK'
  | 9
  | 'LISTEN'
  | 10
  | 'CLOSING'
  | 11

export type _machine_ConnectRecord_State__Output = typeof _machine_ConnectRecord_State[keyof typeof _machine_ConnectRecord_State]

// Original file: protos/machine/machine.proto

export const _machine_ConnectRecord_TimerActive = {
  OFF: 'OFF',
  ON: 'ON',
  KEEPALIVE: 'KEEPALIVE',
  TIMEWAIT: 'TIMEWAIT',
  PROBE: 'PROBE',
} as const;

export type _machine_ConnectRecord_TimerActive =
  | 'OFF'
  | 0
  | 'ON'
  | 1
  | 'KEEPALIVE'
  | 2
  | 'TIMEWAIT'
  | 3
  | 'PROBE'
  | 4

export type _machine_ConnectRecord_TimerActive__Output = typeof _machine_ConnectRecord_TimerActive[keyof typeof _machine_ConnectRecord_TimerActive]

export interface ConnectRecord {
  'l4proto'?: (string);
  'localip'?: (string);
  'localport'?: (number);
  'remoteip'?: (string);
  'remoteport'?: (number);
  'state'?: (_machine_ConnectRecord_State);
  'txqueue'?: (number | string | Long);
  'rxqueue'?: (number | string | Long);
  'tr'?: (_machine_ConnectRecord_TimerActive);
  'timerwhen'?: (number | string | Long);
  'retrnsmt'?: (number | string | Long);
  'uid'?: (number);
  'timeout'?: (number | string | Long);
  'inode'?: (number | string | Long);
  'ref'?: (number | string | Long);
  'pointer'?: (number | string | Long);
  'process'?: (_machine_ConnectRecord_Process | null);
  'netns'?: (string);
}

export interface ConnectRecord__Output {
  'l4proto': (string);
  'localip': (string);
  'localport': (number);
  'remoteip': (string);
  'remoteport': (number);
  'state': (_machine_ConnectRecord_State__Output);
  'txqueue': (string);
  'rxqueue': (string);
  'tr': (_machine_ConnectRecord_TimerActive__Output);
  'timerwhen': (string);
  'retrnsmt': (string);
  'uid': (number);
  'timeout': (string);
  'inode': (string);
  'ref': (string);
  'pointer': (string);
  'process': (_machine_ConnectRecord_Process__Output | null);
  'netns': (string);
}
