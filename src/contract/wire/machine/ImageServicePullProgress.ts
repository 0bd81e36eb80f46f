// Original file: protos/machine/image.proto

import type { ImageServicePullLayerProgress as _machine_ImageServicePullLayerProgress, ImageServicePullLayerProgress__Output as _machine_ImageServicePullLayerProgress__Output } from '../machine/ImageServicePullLayerProgress.ts';

export interface ImageServicePullProgress {
  'layer_id'?: (string);
  'progress'?: (_machine_ImageServicePullLayerProgress | null);
}

export interface ImageServicePullProgress__Output {
  'layer_id': (string);
  'progress': (_machine_ImageServicePullLayerProgress__Output | null);
}
