// Original file: protos/machine/image.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../google/protobuf/Timestamp.ts';
import type { Long } from '@grpc/proto-loader';

export interface ImageServiceListResponse {
  'name'?: (string);
  'digest'?: (string);
  'size'?: (number | string | Long);
  'created_at'?: (_google_protobuf_Timestamp | null);
  'labels'?: ({[key: string]: string});
}

export interface ImageServiceListResponse__Output {
  'name': (string);
  'digest': (string);
  'size': (string);
  'created_at': (_google_protobuf_Timestamp__Output | null);
  'labels': ({[key: string]: string});
}
