// Original file: protos/cosi/v1alpha1/state.proto

import type { DestroyOptions as _cosi_resource_DestroyOptions, DestroyOptions__Output as _cosi_resource_DestroyOptions__Output } from '../../cosi/resource/DestroyOptions.ts';

export interface DestroyRequest {
  'namespace'?: (string);
  'type'?: (string);
  'id'?: (string);
  'options'?: (_cosi_resource_DestroyOptions | null);
}

export interface DestroyRequest__Output {
  'namespace': (string);
  'type': (string);
  'id': (string);
  'options': (_cosi_resource_DestroyOptions__Output | null);
}
