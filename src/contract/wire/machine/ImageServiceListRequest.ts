// Original file: protos/machine/image.proto

import type { ContainerdInstance as _common_ContainerdInstance, ContainerdInstance__Output as _common_ContainerdInstance__Output } from '../common/ContainerdInstance.ts';

export interface ImageServiceListRequest {
  'containerd'?: (_common_ContainerdInstance | null);
}

export interface ImageServiceListRequest__Output {
  'containerd': (_common_ContainerdInstance__Output | null);
}
