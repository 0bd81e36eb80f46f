// Original file: protos/cosi/v1alpha1/state.proto

import type { Resource as _cosi_resource_Resource, Resource__Output as _cosi_resource_Resource__Output } from '../../cosi/resource/Resource.ts';
import type { UpdateOptions as _cosi_resource_UpdateOptions, UpdateOptions__Output as _cosi_resource_UpdateOptions__Output } from '../../cosi/resource/UpdateOptions.ts';

export interface UpdateRequest {
  'new_resource'?: (_cosi_resource_Resource | null);
  'options'?: (_cosi_resource_UpdateOptions | null);
}

export interface UpdateRequest__Output {
  'new_resource': (_cosi_resource_Resource__Output | null);
  'options': (_cosi_resource_UpdateOptions__Output | null);
}
