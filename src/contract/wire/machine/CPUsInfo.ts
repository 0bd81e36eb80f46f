// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { CPUInfo as _machine_CPUInfo, CPUInfo__Output as _machine_CPUInfo__Output } from '../machine/CPUInfo.ts';

export interface CPUsInfo {
  'metadata'?: (_common_Metadata | null);
  'cpu_info'?: (_machine_CPUInfo)[];
}

export interface CPUsInfo__Output {
  'metadata': (_common_Metadata__Output | null);
  'cpu_info': (_machine_CPUInfo__Output)[];
}
