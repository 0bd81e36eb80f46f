// Original file: protos/machine/machine.proto

import type { ContainerDriver as _common_ContainerDriver, ContainerDriver__Output as _common_ContainerDriver__Output } from '../common/ContainerDriver.ts';

export interface RestartRequest {
  'namespace'?: (string);
  'id'?: (string);
  'driver'?: (_common_ContainerDriver);
}

export interface RestartRequest__Output {
  'namespace': (string);
  'id': (string);
  'driver': (_common_ContainerDriver__Output);
}
