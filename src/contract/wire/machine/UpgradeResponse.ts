// Original file: protos/machine/machine.proto

import type { Upgrade as _machine_Upgrade, Upgrade__Output as _machine_Upgrade__Output } from '../machine/Upgrade.ts';

export interface UpgradeResponse {
  'messages'?: (_machine_Upgrade)[];
}

export interface UpgradeResponse__Output {
  'messages': (_machine_Upgrade__Output)[];
}
