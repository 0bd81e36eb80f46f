// Original file: protos/cosi/v1alpha1/resource.proto

import type { Metadata as _cosi_resource_Metadata, Metadata__Output as _cosi_resource_Metadata__Output } from '../../cosi/resource/Metadata.ts';
import type { Spec as _cosi_resource_Spec, Spec__Output as _cosi_resource_Spec__Output } from '../../cosi/resource/Spec.ts';

export interface Resource {
  'metadata'?: (_cosi_resource_Metadata | null);
  'spec'?: (_cosi_resource_Spec | null);
}

export interface Resource__Output {
  'metadata': (_cosi_resource_Metadata__Output | null);
  'spec': (_cosi_resource_Spec__Output | null);
}
