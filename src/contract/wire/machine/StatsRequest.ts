// Original file: protos/machine/machine.proto

import type { ContainerDriver as _common_ContainerDriver, ContainerDriver__Output as _common_ContainerDriver__Output } from '../common/ContainerDriver.ts';

export interface StatsRequest {
  'namespace'?: (string);
  'driver'?: (_common_ContainerDriver);
}

export interface StatsRequest__Output {
  'namespace': (string);
  'driver': (_common_ContainerDriver__Output);
}
