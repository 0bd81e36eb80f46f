// Original file: protos/resource/definitions/enums/enums.proto

export const MachineType = {
  TYPE_UNKNOWN: 'TYPE_UNKNOWN',
  TYPE_INIT: 'TYPE_INIT',
  TYPE_CONTROL_PLANE: 'TYPE_CONTROL_PLANE',
  TYPE_WORKER: 'TYPE_WORKER',
} as const;

export type MachineType =
  | 'TYPE_UNKNOWN'
  | 0
  | 'TYPE_INIT'
  | 1
  | 'TYPE_CONTROL_PLANE'
  | 2
  | 'TYPE_WORKER'
  | 3

export type MachineType__Output = typeof MachineType[keyof typeof MachineType]
