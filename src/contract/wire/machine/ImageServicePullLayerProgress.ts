// Original file: protos/machine/image.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../google/protobuf/Duration.ts';
import type { Long } from '@grpc/proto-loader';

// Original file: protos/machine/image.proto

export const _machine_ImageServicePullLayerProgress_Status = {
  DOWNLOADING: 'DOWNLOADING',
  DOWNLOAD_COMPLETE: 'DOWNLOAD_COMPLETE',
  EXTRACTING: 'EXTRACTING',
  EXTRACT_COMPLETE: 'EXTRACT_COMPLETE',
  ALREADY_EXISTS: 'ALREADY_EXISTS',
} as const;

export type _machine_ImageServicePullLayerProgress_Status =
  | 'DOWNLOADING'
  | 0
  | 'DOWNLOAD_COMPLETE'
  | 1
  | 'EXTRACTING'
  | 2
  | 'EXTRACT_COMPLETE'
  | 3
  | 'ALREADY_EXISTS'
  | 4

export type _machine_ImageServicePullLayerProgress_Status__Output = typeof _machine_ImageServicePullLayerProgress_Status[keyof typeof _machine_ImageServicePullLayerProgress_Status]

export interface ImageServicePullLayerProgress {
  'status'?: (_machine_ImageServicePullLayerProgress_Status);
  'elapsed'?: (_google_protobuf_Duration | null);
  'offset'?: (number | string | Long);
  'total'?: (number | string | Long);
}

export interface ImageServicePullLayerProgress__Output {
  'status': (_machine_ImageServicePullLayerProgress_Status__Output);
  'elapsed': (_google_protobuf_Duration__Output | null);
  'offset': (string);
  'total': (string);
}
