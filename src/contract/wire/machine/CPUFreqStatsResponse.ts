// Original file: protos/machine/machine.proto

import type { CPUsFreqStats as _machine_CPUsFreqStats, CPUsFreqStats__Output as _machine_CPUsFreqStats__Output } from '../machine/CPUsFreqStats.ts';

export interface CPUFreqStatsResponse {
  'messages'?: (_machine_CPUsFreqStats)[];
}

export interface CPUFreqStatsResponse__Output {
  'messages': (_machine_CPUsFreqStats__Output)[];
}
