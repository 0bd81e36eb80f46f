// Original file: protos/machine/machine.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../google/protobuf/Timestamp.ts';

export interface ServiceEvent {
  'msg'?: (string);
  'state'?: (string);
  'ts'?: (_google_protobuf_Timestamp | null);
}

export interface ServiceEvent__Output {
  'msg': (string);
  'state': (string);
  'ts': (_google_protobuf_Timestamp__Output | null);
}
