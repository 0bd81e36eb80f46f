// Original file: protos/resource/definitions/block/block.proto

import type { Long } from '@grpc/proto-loader';

export interface DiscoveredVolumeSpec {
  'size'?: (number | string | Long);
  'sector_size'?: (number | string | Long);
  'io_size'?: (number | string | Long);
  'name'?: (string);
  'uuid'?: (string);
  'label'?: (string);
  'block_size'?: (number);
  'filesystem_block_size'?: (number);
  'probed_size'?: (number | string | Long);
  'partition_uuid'?: (string);
  'partition_type'?: (string);
  'partition_label'?: (string);
  'partition_index'?: (number | string | Long);
  'type'?: (string);
  'device_path'?: (string);
  'parent'?: (string);
  'dev_path'?: (string);
  'parent_dev_path'?: (string);
  'pretty_size'?: (string);
}

export interface DiscoveredVolumeSpec__Output {
  'size': (string);
  'sector_size': (string);
  'io_size': (string);
  'name': (string);
  'uuid': (string);
  'label': (string);
  'block_size': (number);
  'filesystem_block_size': (number);
  'probed_size': (string);
  'partition_uuid': (string);
  'partition_type': (string);
  'partition_label': (string);
  'partition_index': (string);
  'type': (string);
  'device_path': (string);
  'parent': (string);
  'dev_path': (string);
  'parent_dev_path': (string);
  'pretty_size': (string);
}
