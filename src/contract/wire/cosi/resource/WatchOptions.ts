// Original file: protos/cosi/v1alpha1/state.proto

import type { LabelQuery as _cosi_resource_LabelQuery, LabelQuery__Output as _cosi_resource_LabelQuery__Output } from '../../cosi/resource/LabelQuery.ts';
import type { IDQuery as _cosi_resource_IDQuery, IDQuery__Output as _cosi_resource_IDQuery__Output } from '../../cosi/resource/IDQuery.ts';

export interface WatchOptions {
  'bootstrap_contents'?: (boolean);
  'tail_events'?: (number);
  'label_query'?: (_cosi_resource_LabelQuery)[];
  'id_query'?: (_cosi_resource_IDQuery | null);
  'aggregated'?: (boolean);
  'start_from_bookmark'?: (Buffer | Uint8Array | string);
  'bootstrap_bookmark'?: (boolean);
  '_start_from_bookmark'?: "start_from_bookmark";
}

export interface WatchOptions__Output {
  'bootstrap_contents': (boolean);
  'tail_events': (number);
  'label_query': (_cosi_resource_LabelQuery__Output)[];
  'id_query': (_cosi_resource_IDQuery__Output | null);
  'aggregated': (boolean);
  'start_from_bookmark'?: (Buffer);
  'bootstrap_bookmark': (boolean);
  '_start_from_bookmark'?: "start_from_bookmark";
}
