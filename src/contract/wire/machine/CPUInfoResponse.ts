// Original file: protos/machine/machine.proto

import type { CPUsInfo as _machine_CPUsInfo, CPUsInfo__Output as _machine_CPUsInfo__Output } from '../machine/CPUsInfo.ts';

export interface CPUInfoResponse {
  'messages'?: (_machine_CPUsInfo)[];
}

export interface CPUInfoResponse__Output {
  'messages': (_machine_CPUsInfo__Output)[];
}
