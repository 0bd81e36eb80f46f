// Original file: protos/machine/machine.proto

import type { SystemStat as _machine_SystemStat, SystemStat__Output as _machine_SystemStat__Output } from '../machine/SystemStat.ts';

export interface SystemStatResponse {
  'messages'?: (_machine_SystemStat)[];
}

export interface SystemStatResponse__Output {
  'messages': (_machine_SystemStat__Output)[];
}
