// Original file: protos/cosi/v1alpha1/state.proto

import type { Resource as _cosi_resource_Resource, Resource__Output as _cosi_resource_Resource__Output } from '../../cosi/resource/Resource.ts';
import type { CreateOptions as _cosi_resource_CreateOptions, CreateOptions__Output as _cosi_resource_CreateOptions__Output } from '../../cosi/resource/CreateOptions.ts';

export interface CreateRequest {
  'resource'?: (_cosi_resource_Resource | null);
  'options'?: (_cosi_resource_CreateOptions | null);
}

export interface CreateRequest__Output {
  'resource': (_cosi_resource_Resource__Output | null);
  'options': (_cosi_resource_CreateOptions__Output | null);
}
