// Original file: protos/machine/machine.proto


// Original file: protos/machine/machine.proto

export const _machine_UpgradeRequest_RebootMode = {
  DEFAULT: 'DEFAULT',
  POWERCYCLE: 'POWERCYCLE',
} as const;

export type _machine_UpgradeRequest_RebootMode =
  | 'DEFAULT'
  | 0
  | 'POWERCYCLE'
  | 1

export type _machine_UpgradeRequest_RebootMode__Output = typeof _machine_UpgradeRequest_RebootMode[keyof typeof _machine_UpgradeRequest_RebootMode]

export interface UpgradeRequest {
  'image'?: (string);
  'preserve'?: (boolean);
  'stage'?: (boolean);
  'force'?: (boolean);
  'reboot_mode'?: (_machine_UpgradeRequest_RebootMode);
}

export interface UpgradeRequest__Output {
  'image': (string);
  'preserve': (boolean);
  'stage': (boolean);
  'force': (boolean);
  'reboot_mode': (_machine_UpgradeRequest_RebootMode__Output);
}
