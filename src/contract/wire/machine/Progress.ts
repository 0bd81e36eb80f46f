// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { Long } from '@grpc/proto-loader';

export interface Progress {
  'metadata'?: (_common_Metadata | null);
  'stage'?: (string);
  'message'?: (string);
  'done'?: (number | string | Long);
  'total'?: (number | string | Long);
}

export interface Progress__Output {
  'metadata': (_common_Metadata__Output | null);
  'stage': (string);
  'message': (string);
  'done': (string);
  'total': (string);
}
