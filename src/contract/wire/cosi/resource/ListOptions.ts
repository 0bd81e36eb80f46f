// Original file: protos/cosi/v1alpha1/state.proto

import type { LabelQuery as _cosi_resource_LabelQuery, LabelQuery__Output as _cosi_resource_LabelQuery__Output } from '../../cosi/resource/LabelQuery.ts';
import type { IDQuery as _cosi_resource_IDQuery, IDQuery__Output as _cosi_resource_IDQuery__Output } from '../../cosi/resource/IDQuery.ts';

export interface ListOptions {
  'label_query'?: (_cosi_resource_LabelQuery)[];
  'id_query'?: (_cosi_resource_IDQuery | null);
}

export interface ListOptions__Output {
  'label_query': (_cosi_resource_LabelQuery__Output)[];
  'id_query': (_cosi_resource_IDQuery__Output | null);
}
