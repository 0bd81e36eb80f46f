// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { Any as _google_protobuf_Any, Any__Output as _google_protobuf_Any__Output } from '../google/protobuf/Any.ts';

export interface Event {
  'metadata'?: (_common_Metadata | null);
  'data'?: (_google_protobuf_Any | null);
  'id'?: (string);
  'actor_id'?: (string);
}

export interface Event__Output {
  'metadata': (_common_Metadata__Output | null);
  'data': (_google_protobuf_Any__Output | null);
  'id': (string);
  'actor_id': (string);
}
