// Original file: protos/common/common.proto

import type { Code as _common_Code, Code__Output as _common_Code__Output } from '../common/Code.ts';
import type { Any as _google_protobuf_Any, Any__Output as _google_protobuf_Any__Output } from '../google/protobuf/Any.ts';

export interface Error {
  'code'?: (_common_Code);
  'message'?: (string);
  'details'?: (_google_protobuf_Any)[];
}

export interface Error__Output {
  'code': (_common_Code__Output);
  'message': (string);
  'details': (_google_protobuf_Any__Output)[];
}
