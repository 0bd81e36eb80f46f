// Original file: protos/resource/definitions/containers/containers.proto

import type { Long } from '@grpc/proto-loader';

export interface ResolvedMountSpec {
  'kind'?: (string);
  'source'?: (string);
  'destination'?: (string);
  'size'?: (number | string | Long);
  'options'?: (string)[];
}

export interface ResolvedMountSpec__Output {
  'kind': (string);
  'source': (string);
  'destination': (string);
  'size': (string);
  'options': (string)[];
}
