// Original file: protos/time/time.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../google/protobuf/Timestamp.ts';

export interface Time {
  'metadata'?: (_common_Metadata | null);
  'server'?: (string);
  'localtime'?: (_google_protobuf_Timestamp | null);
  'remotetime'?: (_google_protobuf_Timestamp | null);
}

export interface Time__Output {
  'metadata': (_common_Metadata__Output | null);
  'server': (string);
  'localtime': (_google_protobuf_Timestamp__Output | null);
  'remotetime': (_google_protobuf_Timestamp__Output | null);
}
