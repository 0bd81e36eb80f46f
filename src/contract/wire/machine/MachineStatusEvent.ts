// Original file: protos/machine/machine.proto


// Original file: protos/machine/machine.proto

export const _machine_MachineStatusEvent_MachineStage = {
  UNKNOWN: 'UNKNOWN',
  BOOTING: 'BOOTING',
  INSTALLING: 'INSTALLING',
  MAINTENANCE: 'MAINTENANCE',
  RUNNING: 'RUNNING',
  REBOOTING: 'REBOOTING',
  SHUTTING_DOWN: 'SHUTTING_DOWN',
  RESETTING: 'RESETTING',
  UPGRADING: 'UPGRADING',
} as const;

export type _machine_MachineStatusEvent_MachineStage =
  | 'UNKNOWN'
  | 0
  | 'BOOTING'
  | 1
  | 'INSTALLING'
  | 2
  | 'MAINTENANCE'
  | 3
  | 'RUNNING'
  | 4
  | 'REBOOTING'
  | 5
  | 'SHUTTING_DOWN'
  | 6
  | 'RESETTING'
  | 7
  | 'UPGRADING'
  | 8

export type _machine_MachineStatusEvent_MachineStage__Output = typeof _machine_MachineStatusEvent_MachineStage[keyof typeof _machine_MachineStatusEvent_MachineStage]

export interface _machine_MachineStatusEvent_MachineStatus {
  'ready'?: (boolean);
  'unmet_conditions'?: (_machine_MachineStatusEvent_MachineStatus_UnmetCondition)[];
}

export interface _machine_MachineStatusEvent_MachineStatus__Output {
  'ready': (boolean);
  'unmet_conditions': (_machine_MachineStatusEvent_MachineStatus_UnmetCondition__Output)[];
}

export interface _machine_MachineStatusEvent_MachineStatus_UnmetCondition {
  'name'?: (string);
  'reason'?: (string);
}

export interface _machine_MachineStatusEvent_MachineStatus_UnmetCondition__Output {
  'name': (string);
  'reason': (string);
}

export interface MachineStatusEvent {
  'stage'?: (_machine_MachineStatusEvent_MachineStage);
  'status'?: (_machine_MachineStatusEvent_MachineStatus | null);
}

export interface MachineStatusEvent__Output {
  'stage': (_machine_MachineStatusEvent_MachineStage__Output);
  'status': (_machine_MachineStatusEvent_MachineStatus__Output | null);
}
