// Original file: protos/machine/machine.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../google/protobuf/Timestamp.ts';

export interface ServiceHealth {
  'unknown'?: (boolean);
  'healthy'?: (boolean);
  'last_message'?: (string);
  'last_change'?: (_google_protobuf_Timestamp | null);
}

export interface ServiceHealth__Output {
  'unknown': (boolean);
  'healthy': (boolean);
  'last_message': (string);
  'last_change': (_google_protobuf_Timestamp__Output | null);
}
