// Original file: protos/machine/image.proto

import type { ImageServicePullProgress as _machine_ImageServicePullProgress, ImageServicePullProgress__Output as _machine_ImageServicePullProgress__Output } from '../machine/ImageServicePullProgress.ts';

export interface ImageServicePullResponse {
  'name'?: (string);
  'pull_progress'?: (_machine_ImageServicePullProgress | null);
  'response'?: "name"|"pull_progress";
}

export interface ImageServicePullResponse__Output {
  'name'?: (string);
  'pull_progress'?: (_machine_ImageServicePullProgress__Output | null);
  'response'?: "name"|"pull_progress";
}
