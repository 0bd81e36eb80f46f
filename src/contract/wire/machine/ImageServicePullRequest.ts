// Original file: protos/machine/image.proto

import type { ContainerdInstance as _common_ContainerdInstance, ContainerdInstance__Output as _common_ContainerdInstance__Output } from '../common/ContainerdInstance.ts';

export interface ImageServicePullRequest {
  'containerd'?: (_common_ContainerdInstance | null);
  'image_ref'?: (string);
}

export interface ImageServicePullRequest__Output {
  'containerd': (_common_ContainerdInstance__Output | null);
  'image_ref': (string);
}
