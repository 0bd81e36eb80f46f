// Original file: protos/resource/definitions/containers/containers.proto

import type { Long } from '@grpc/proto-loader';

export interface ContainerMountSpec {
  'kind'?: (string);
  'volume_id'?: (string);
  'source'?: (string);
  'destination'?: (string);
  'size'?: (number | string | Long);
  'options'?: (string)[];
}

export interface ContainerMountSpec__Output {
  'kind': (string);
  'volume_id': (string);
  'source': (string);
  'destination': (string);
  'size': (string);
  'options': (string)[];
}
