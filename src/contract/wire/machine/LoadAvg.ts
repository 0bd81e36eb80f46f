// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';

export interface LoadAvg {
  'metadata'?: (_common_Metadata | null);
  'load1'?: (number | string);
  'load5'?: (number | string);
  'load15'?: (number | string);
}

export interface LoadAvg__Output {
  'metadata': (_common_Metadata__Output | null);
  'load1': (number);
  'load5': (number);
  'load15': (number);
}
