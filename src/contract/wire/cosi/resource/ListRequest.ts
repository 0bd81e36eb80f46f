// Original file: protos/cosi/v1alpha1/state.proto

import type { ListOptions as _cosi_resource_ListOptions, ListOptions__Output as _cosi_resource_ListOptions__Output } from '../../cosi/resource/ListOptions.ts';

export interface ListRequest {
  'namespace'?: (string);
  'type'?: (string);
  'options'?: (_cosi_resource_ListOptions | null);
}

export interface ListRequest__Output {
  'namespace': (string);
  'type': (string);
  'options': (_cosi_resource_ListOptions__Output | null);
}
