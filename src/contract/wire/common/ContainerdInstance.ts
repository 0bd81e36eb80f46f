// Original file: protos/common/common.proto

import type { ContainerDriver as _common_ContainerDriver, ContainerDriver__Output as _common_ContainerDriver__Output } from '../common/ContainerDriver.ts';
import type { ContainerdNamespace as _common_ContainerdNamespace, ContainerdNamespace__Output as _common_ContainerdNamespace__Output } from '../common/ContainerdNamespace.ts';

export interface ContainerdInstance {
  'driver'?: (_common_ContainerDriver);
  'namespace'?: (_common_ContainerdNamespace);
}

export interface ContainerdInstance__Output {
  'driver': (_common_ContainerDriver__Output);
  'namespace': (_common_ContainerdNamespace__Output);
}
