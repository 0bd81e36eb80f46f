// Original file: protos/machine/machine.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../google/protobuf/Duration.ts';

// Original file: protos/machine/machine.proto

export const _machine_ApplyConfigurationRequest_Mode = {
  REBOOT: 'REBOOT',
  AUTO: 'AUTO',
  NO_REBOOT: 'NO_REBOOT',
  STAGED: 'STAGED',
  TRY: 'TRY',
} as const;

export type _machine_ApplyConfigurationRequest_Mode =
  | 'REBOOT'
  | 0
  | 'AUTO'
  | 1
  | 'NO_REBOOT'
  | 2
  | 'STAGED'
  | 3
  | 'TRY'
  | 4

export type _machine_ApplyConfigurationRequest_Mode__Output = typeof _machine_ApplyConfigurationRequest_Mode[keyof typeof _machine_ApplyConfigurationRequest_Mode]

export interface ApplyConfigurationRequest {
  'data'?: (Buffer | Uint8Array | string);
  'mode'?: (_machine_ApplyConfigurationRequest_Mode);
  'dry_run'?: (boolean);
  'try_mode_timeout'?: (_google_protobuf_Duration | null);
}

export interface ApplyConfigurationRequest__Output {
  'data': (Buffer);
  'mode': (_machine_ApplyConfigurationRequest_Mode__Output);
  'dry_run': (boolean);
  'try_mode_timeout': (_google_protobuf_Duration__Output | null);
}
