// Original file: protos/cosi/v1alpha1/resource.proto

import type { LabelTerm as _cosi_resource_LabelTerm, LabelTerm__Output as _cosi_resource_LabelTerm__Output } from '../../cosi/resource/LabelTerm.ts';

export interface LabelQuery {
  'terms'?: (_cosi_resource_LabelTerm)[];
}

export interface LabelQuery__Output {
  'terms': (_cosi_resource_LabelTerm__Output)[];
}
