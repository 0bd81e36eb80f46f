// Original file: protos/machine/machine.proto

import type { Long } from '@grpc/proto-loader';

export interface RestartEvent {
  'cmd'?: (number | string | Long);
}

export interface RestartEvent__Output {
  'cmd': (string);
}
