// Original file: protos/cosi/v1alpha1/state.proto

import type { WatchOptions as _cosi_resource_WatchOptions, WatchOptions__Output as _cosi_resource_WatchOptions__Output } from '../../cosi/resource/WatchOptions.ts';

export interface WatchRequest {
  'namespace'?: (string);
  'type'?: (string);
  'id'?: (string);
  'options'?: (_cosi_resource_WatchOptions | null);
  'api_version'?: (number);
  '_id'?: "id";
}

export interface WatchRequest__Output {
  'namespace': (string);
  'type': (string);
  'id'?: (string);
  'options': (_cosi_resource_WatchOptions__Output | null);
  'api_version': (number);
  '_id'?: "id";
}
