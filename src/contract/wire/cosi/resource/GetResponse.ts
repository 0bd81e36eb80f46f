// Original file: protos/cosi/v1alpha1/state.proto

import type { Resource as _cosi_resource_Resource, Resource__Output as _cosi_resource_Resource__Output } from '../../cosi/resource/Resource.ts';

export interface GetResponse {
  'resource'?: (_cosi_resource_Resource | null);
}

export interface GetResponse__Output {
  'resource': (_cosi_resource_Resource__Output | null);
}
