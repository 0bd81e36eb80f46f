// Original file: protos/common/common.proto

import type { Empty as _common_Empty, Empty__Output as _common_Empty__Output } from '../common/Empty.ts';

export interface EmptyResponse {
  'messages'?: (_common_Empty)[];
}

export interface EmptyResponse__Output {
  'messages': (_common_Empty__Output)[];
}
