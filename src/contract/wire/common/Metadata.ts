// Original file: protos/common/common.proto

import type { Status as _google_rpc_Status, Status__Output as _google_rpc_Status__Output } from '../google/rpc/Status.ts';

export interface Metadata {
  'hostname'?: (string);
  'error'?: (string);
  'status'?: (_google_rpc_Status | null);
}

export interface Metadata__Output {
  'hostname': (string);
  'error': (string);
  'status': (_google_rpc_Status__Output | null);
}
