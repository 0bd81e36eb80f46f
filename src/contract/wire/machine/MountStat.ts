// Original file: protos/machine/machine.proto

import type { Long } from '@grpc/proto-loader';

export interface MountStat {
  'filesystem'?: (string);
  'size'?: (number | string | Long);
  'available'?: (number | string | Long);
  'mounted_on'?: (string);
}

export interface MountStat__Output {
  'filesystem': (string);
  'size': (string);
  'available': (string);
  'mounted_on': (string);
}
