// Original file: protos/resource/definitions/block/block.proto

import type { Long } from '@grpc/proto-loader';

export interface DeviceSpec {
  'type'?: (string);
  'major'?: (number | string | Long);
  'minor'?: (number | string | Long);
  'partition_name'?: (string);
  'partition_number'?: (number | string | Long);
  'generation'?: (number | string | Long);
  'device_path'?: (string);
  'parent'?: (string);
  'secondaries'?: (string)[];
}

export interface DeviceSpec__Output {
  'type': (string);
  'major': (string);
  'minor': (string);
  'partition_name': (string);
  'partition_number': (string);
  'generation': (string);
  'device_path': (string);
  'parent': (string);
  'secondaries': (string)[];
}
