// Original file: protos/bronze/resource/definitions/runtime.proto

import type { Long } from '@grpc/proto-loader';

export interface RootfsStatusSpec {
  'device'?: (string);
  'filesystem_type'?: (string);
  'verified'?: (boolean);
  'mapper_name'?: (string);
  'root_hash'?: (string);
  'hash_algorithm'?: (string);
  'data_block_size'?: (number);
  'data_blocks'?: (number | string | Long);
  'status'?: (string);
  'expected_root_hash'?: (string);
  'reason'?: (string);
}

export interface RootfsStatusSpec__Output {
  'device': (string);
  'filesystem_type': (string);
  'verified': (boolean);
  'mapper_name': (string);
  'root_hash': (string);
  'hash_algorithm': (string);
  'data_block_size': (number);
  'data_blocks': (string);
  'status': (string);
  'expected_root_hash': (string);
  'reason': (string);
}
