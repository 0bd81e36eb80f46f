// Original file: protos/machine/machine.proto

import type { Reboot as _machine_Reboot, Reboot__Output as _machine_Reboot__Output } from '../machine/Reboot.ts';

export interface RebootResponse {
  'messages'?: (_machine_Reboot)[];
}

export interface RebootResponse__Output {
  'messages': (_machine_Reboot__Output)[];
}
