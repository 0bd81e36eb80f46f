// Original file: protos/resource/definitions/time/time.proto

import type { Long } from '@grpc/proto-loader';

export interface StatusSpec {
  'synced'?: (boolean);
  'epoch'?: (number | string | Long);
  'sync_disabled'?: (boolean);
}

export interface StatusSpec__Output {
  'synced': (boolean);
  'epoch': (string);
  'sync_disabled': (boolean);
}
