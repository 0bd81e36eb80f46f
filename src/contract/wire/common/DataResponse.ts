// Original file: protos/common/common.proto

import type { Data as _common_Data, Data__Output as _common_Data__Output } from '../common/Data.ts';

export interface DataResponse {
  'messages'?: (_common_Data)[];
}

export interface DataResponse__Output {
  'messages': (_common_Data__Output)[];
}
