// Original file: protos/machine/machine.proto

import type { ApplyConfiguration as _machine_ApplyConfiguration, ApplyConfiguration__Output as _machine_ApplyConfiguration__Output } from '../machine/ApplyConfiguration.ts';

export interface ApplyConfigurationResponse {
  'messages'?: (_machine_ApplyConfiguration)[];
}

export interface ApplyConfigurationResponse__Output {
  'messages': (_machine_ApplyConfiguration__Output)[];
}
