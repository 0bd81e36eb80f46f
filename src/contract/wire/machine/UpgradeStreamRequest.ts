// Original file: protos/machine/machine.proto

import type { UpgradeRequest as _machine_UpgradeRequest, UpgradeRequest__Output as _machine_UpgradeRequest__Output } from '../machine/UpgradeRequest.ts';
import type { Long } from '@grpc/proto-loader';

export interface UpgradeStreamRequest {
  'request'?: (_machine_UpgradeRequest | null);
  'size'?: (number | string | Long);
  'chunk'?: (Buffer | Uint8Array | string);
}

export interface UpgradeStreamRequest__Output {
  'request': (_machine_UpgradeRequest__Output | null);
  'size': (string);
  'chunk': (Buffer);
}
