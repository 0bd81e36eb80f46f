// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { Long } from '@grpc/proto-loader';

export interface DiskUsageInfo {
  'metadata'?: (_common_Metadata | null);
  'name'?: (string);
  'size'?: (number | string | Long);
  'error'?: (string);
  'relative_name'?: (string);
}

export interface DiskUsageInfo__Output {
  'metadata': (_common_Metadata__Output | null);
  'name': (string);
  'size': (string);
  'error': (string);
  'relative_name': (string);
}
