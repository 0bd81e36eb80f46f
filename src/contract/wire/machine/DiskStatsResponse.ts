// Original file: protos/machine/machine.proto

import type { DiskStats as _machine_DiskStats, DiskStats__Output as _machine_DiskStats__Output } from '../machine/DiskStats.ts';

export interface DiskStatsResponse {
  'messages'?: (_machine_DiskStats)[];
}

export interface DiskStatsResponse__Output {
  'messages': (_machine_DiskStats__Output)[];
}
