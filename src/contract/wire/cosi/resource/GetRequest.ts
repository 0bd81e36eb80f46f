// Original file: protos/cosi/v1alpha1/state.proto

import type { GetOptions as _cosi_resource_GetOptions, GetOptions__Output as _cosi_resource_GetOptions__Output } from '../../cosi/resource/GetOptions.ts';

export interface GetRequest {
  'namespace'?: (string);
  'type'?: (string);
  'id'?: (string);
  'options'?: (_cosi_resource_GetOptions | null);
}

export interface GetRequest__Output {
  'namespace': (string);
  'type': (string);
  'id': (string);
  'options': (_cosi_resource_GetOptions__Output | null);
}
