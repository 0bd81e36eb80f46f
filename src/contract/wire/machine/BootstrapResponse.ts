// Original file: protos/machine/machine.proto

import type { Bootstrap as _machine_Bootstrap, Bootstrap__Output as _machine_Bootstrap__Output } from '../machine/Bootstrap.ts';

export interface BootstrapResponse {
  'messages'?: (_machine_Bootstrap)[];
}

export interface BootstrapResponse__Output {
  'messages': (_machine_Bootstrap__Output)[];
}
