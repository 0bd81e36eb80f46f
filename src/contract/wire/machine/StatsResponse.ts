// Original file: protos/machine/machine.proto

import type { Stats as _machine_Stats, Stats__Output as _machine_Stats__Output } from '../machine/Stats.ts';

export interface StatsResponse {
  'messages'?: (_machine_Stats)[];
}

export interface StatsResponse__Output {
  'messages': (_machine_Stats__Output)[];
}
