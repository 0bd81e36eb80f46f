// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { Long } from '@grpc/proto-loader';

export interface FileInfo {
  'metadata'?: (_common_Metadata | null);
  'name'?: (string);
  'size'?: (number | string | Long);
  'mode'?: (number);
  'modified'?: (number | string | Long);
  'is_dir'?: (boolean);
  'error'?: (string);
  'link'?: (string);
  'relative_name'?: (string);
  'uid'?: (number);
  'gid'?: (number);
}

export interface FileInfo__Output {
  'metadata': (_common_Metadata__Output | null);
  'name': (string);
  'size': (string);
  'mode': (number);
  'modified': (string);
  'is_dir': (boolean);
  'error': (string);
  'link': (string);
  'relative_name': (string);
  'uid': (number);
  'gid': (number);
}
