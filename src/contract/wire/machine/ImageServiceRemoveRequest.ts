// Original file: protos/machine/image.proto

import type { ContainerdInstance as _common_ContainerdInstance, ContainerdInstance__Output as _common_ContainerdInstance__Output } from '../common/ContainerdInstance.ts';

export interface ImageServiceRemoveRequest {
  'containerd'?: (_common_ContainerdInstance | null);
  'image_ref'?: (string);
}

export interface ImageServiceRemoveRequest__Output {
  'containerd': (_common_ContainerdInstance__Output | null);
  'image_ref': (string);
}
