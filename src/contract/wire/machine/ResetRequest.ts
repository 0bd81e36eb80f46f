// Original file: protos/machine/machine.proto

import type { ResetPartitionSpec as _machine_ResetPartitionSpec, ResetPartitionSpec__Output as _machine_ResetPartitionSpec__Output } from '../machine/ResetPartitionSpec.ts';

// Original file: protos/machine/machine.proto

export const _machine_ResetRequest_WipeMode = {
  ALL: 'ALL',
  SYSTEM_DISK: 'SYSTEM_DISK',
  USER_DISKS: 'USER_DISKS',
} as const;

export type _machine_ResetRequest_WipeMode =
  | 'ALL'
  | 0
  | 'SYSTEM_DISK'
  | 1
  | 'USER_DISKS'
  | 2

export type _machine_ResetRequest_WipeMode__Output = typeof _machine_ResetRequest_WipeMode[keyof typeof _machine_ResetRequest_WipeMode]

export interface ResetRequest {
  'graceful'?: (boolean);
  'reboot'?: (boolean);
  'system_partitions_to_wipe'?: (_machine_ResetPartitionSpec)[];
  'user_disks_to_wipe'?: (string)[];
  'mode'?: (_machine_ResetRequest_WipeMode);
}

export interface ResetRequest__Output {
  'graceful': (boolean);
  'reboot': (boolean);
  'system_partitions_to_wipe': (_machine_ResetPartitionSpec__Output)[];
  'user_disks_to_wipe': (string)[];
  'mode': (_machine_ResetRequest_WipeMode__Output);
}
