// Original file: protos/machine/machine.proto

import type { Long } from '@grpc/proto-loader';

export interface DiskStat {
  'name'?: (string);
  'read_completed'?: (number | string | Long);
  'read_merged'?: (number | string | Long);
  'read_sectors'?: (number | string | Long);
  'read_time_ms'?: (number | string | Long);
  'write_completed'?: (number | string | Long);
  'write_merged'?: (number | string | Long);
  'write_sectors'?: (number | string | Long);
  'write_time_ms'?: (number | string | Long);
  'io_in_progress'?: (number | string | Long);
  'io_time_ms'?: (number | string | Long);
  'io_time_weighted_ms'?: (number | string | Long);
  'discard_completed'?: (number | string | Long);
  'discard_merged'?: (number | string | Long);
  'discard_sectors'?: (number | string | Long);
  'discard_time_ms'?: (number | string | Long);
}

export interface DiskStat__Output {
  'name': (string);
  'read_completed': (string);
  'read_merged': (string);
  'read_sectors': (string);
  'read_time_ms': (string);
  'write_completed': (string);
  'write_merged': (string);
  'write_sectors': (string);
  'write_time_ms': (string);
  'io_in_progress': (string);
  'io_time_ms': (string);
  'io_time_weighted_ms': (string);
  'discard_completed': (string);
  'discard_merged': (string);
  'discard_sectors': (string);
  'discard_time_ms': (string);
}
