// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { CPUFreqStats as _machine_CPUFreqStats, CPUFreqStats__Output as _machine_CPUFreqStats__Output } from '../machine/CPUFreqStats.ts';

export interface CPUsFreqStats {
  'metadata'?: (_common_Metadata | null);
  'cpu_freq_stats'?: (_machine_CPUFreqStats)[];
}

export interface CPUsFreqStats__Output {
  'metadata': (_common_Metadata__Output | null);
  'cpu_freq_stats': (_machine_CPUFreqStats__Output)[];
}
