// Original file: protos/machine/machine.proto

import type { Mounts as _machine_Mounts, Mounts__Output as _machine_Mounts__Output } from '../machine/Mounts.ts';

export interface MountsResponse {
  'messages'?: (_machine_Mounts)[];
}

export interface MountsResponse__Output {
  'messages': (_machine_Mounts__Output)[];
}
