// Original file: protos/machine/machine.proto

import type { LoadAvg as _machine_LoadAvg, LoadAvg__Output as _machine_LoadAvg__Output } from '../machine/LoadAvg.ts';

export interface LoadAvgResponse {
  'messages'?: (_machine_LoadAvg)[];
}

export interface LoadAvgResponse__Output {
  'messages': (_machine_LoadAvg__Output)[];
}
