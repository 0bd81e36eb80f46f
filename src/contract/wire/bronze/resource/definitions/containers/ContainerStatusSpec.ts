// Original file: protos/bronze/resource/definitions/containers.proto

import type { Long } from '@grpc/proto-loader';

export interface ContainerStatusSpec {
  'phase'?: (string);
  'image'?: (string);
  'pid'?: (number | string | Long);
  'starts'?: (number);
  'started_at'?: (string);
  'exit_code'?: (number);
  'healthy'?: (boolean);
  'message'?: (string);
  'hash'?: (string);
  '_healthy'?: "healthy";
}

export interface ContainerStatusSpec__Output {
  'phase': (string);
  'image': (string);
  'pid': (string);
  'starts': (number);
  'started_at': (string);
  'exit_code': (number);
  'healthy'?: (boolean);
  'message': (string);
  'hash': (string);
  '_healthy'?: "healthy";
}
