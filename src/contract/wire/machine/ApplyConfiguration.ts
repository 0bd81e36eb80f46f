// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { _machine_ApplyConfigurationRequest_Mode, _machine_ApplyConfigurationRequest_Mode__Output } from '../machine/ApplyConfigurationRequest.ts';

export interface ApplyConfiguration {
  'metadata'?: (_common_Metadata | null);
  'warnings'?: (string)[];
  'mode'?: (_machine_ApplyConfigurationRequest_Mode);
  'mode_details'?: (string);
}

export interface ApplyConfiguration__Output {
  'metadata': (_common_Metadata__Output | null);
  'warnings': (string)[];
  'mode': (_machine_ApplyConfigurationRequest_Mode__Output);
  'mode_details': (string);
}
