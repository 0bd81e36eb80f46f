// Original file: protos/cosi/v1alpha1/resource.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp.ts';

export interface Metadata {
  'namespace'?: (string);
  'type'?: (string);
  'id'?: (string);
  'version'?: (string);
  'owner'?: (string);
  'phase'?: (string);
  'created'?: (_google_protobuf_Timestamp | null);
  'updated'?: (_google_protobuf_Timestamp | null);
  'finalizers'?: (string)[];
  'labels'?: ({[key: string]: string});
  'annotations'?: ({[key: string]: string});
}

export interface Metadata__Output {
  'namespace': (string);
  'type': (string);
  'id': (string);
  'version': (string);
  'owner': (string);
  'phase': (string);
  'created': (_google_protobuf_Timestamp__Output | null);
  'updated': (_google_protobuf_Timestamp__Output | null);
  'finalizers': (string)[];
  'labels': ({[key: string]: string});
  'annotations': ({[key: string]: string});
}
