// Original file: protos/machine/machine.proto

import type { Long } from '@grpc/proto-loader';

export interface CPUFreqStats {
  'current_frequency'?: (number | string | Long);
  'minimum_frequency'?: (number | string | Long);
  'maximum_frequency'?: (number | string | Long);
  'governor'?: (string);
}

export interface CPUFreqStats__Output {
  'current_frequency': (string);
  'minimum_frequency': (string);
  'maximum_frequency': (string);
  'governor': (string);
}
