// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { ProcessInfo as _machine_ProcessInfo, ProcessInfo__Output as _machine_ProcessInfo__Output } from '../machine/ProcessInfo.ts';

export interface Process {
  'metadata'?: (_common_Metadata | null);
  'processes'?: (_machine_ProcessInfo)[];
}

export interface Process__Output {
  'metadata': (_common_Metadata__Output | null);
  'processes': (_machine_ProcessInfo__Output)[];
}
