// Original file: protos/machine/machine.proto

import type { ContainerDriver as _common_ContainerDriver, ContainerDriver__Output as _common_ContainerDriver__Output } from '../common/ContainerDriver.ts';

export interface LogsRequest {
  'namespace'?: (string);
  'id'?: (string);
  'driver'?: (_common_ContainerDriver);
  'follow'?: (boolean);
  'tail_lines'?: (number);
}

export interface LogsRequest__Output {
  'namespace': (string);
  'id': (string);
  'driver': (_common_ContainerDriver__Output);
  'follow': (boolean);
  'tail_lines': (number);
}
