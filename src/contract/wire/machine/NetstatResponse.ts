// Original file: protos/machine/machine.proto

import type { Netstat as _machine_Netstat, Netstat__Output as _machine_Netstat__Output } from '../machine/Netstat.ts';

export interface NetstatResponse {
  'messages'?: (_machine_Netstat)[];
}

export interface NetstatResponse__Output {
  'messages': (_machine_Netstat__Output)[];
}
