// Original file: protos/machine/image.proto

import type { ContainerdInstance as _common_ContainerdInstance, ContainerdInstance__Output as _common_ContainerdInstance__Output } from '../common/ContainerdInstance.ts';
import type { Data as _common_Data, Data__Output as _common_Data__Output } from '../common/Data.ts';

export interface ImageServiceImportRequest {
  'containerd'?: (_common_ContainerdInstance | null);
  'image_chunk'?: (_common_Data | null);
  'request'?: "containerd"|"image_chunk";
}

export interface ImageServiceImportRequest__Output {
  'containerd'?: (_common_ContainerdInstance__Output | null);
  'image_chunk'?: (_common_Data__Output | null);
  'request'?: "containerd"|"image_chunk";
}
