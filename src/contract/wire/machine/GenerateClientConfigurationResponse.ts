// Original file: protos/machine/machine.proto

import type { GenerateClientConfiguration as _machine_GenerateClientConfiguration, GenerateClientConfiguration__Output as _machine_GenerateClientConfiguration__Output } from '../machine/GenerateClientConfiguration.ts';

export interface GenerateClientConfigurationResponse {
  'messages'?: (_machine_GenerateClientConfiguration)[];
}

export interface GenerateClientConfigurationResponse__Output {
  'messages': (_machine_GenerateClientConfiguration__Output)[];
}
