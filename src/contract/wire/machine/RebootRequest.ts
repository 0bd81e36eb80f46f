// Original file: protos/machine/machine.proto


// Original file: protos/machine/machine.proto

export const _machine_RebootRequest_Mode = {
  DEFAULT: 'DEFAULT',
  POWERCYCLE: 'POWERCYCLE',
} as const;

export type _machine_RebootRequest_Mode =
  | 'DEFAULT'
  | 0
  | 'POWERCYCLE'
  | 1

export type _machine_RebootRequest_Mode__Output = typeof _machine_RebootRequest_Mode[keyof typeof _machine_RebootRequest_Mode]

export interface RebootRequest {
  'mode'?: (_machine_RebootRequest_Mode);
}

export interface RebootRequest__Output {
  'mode': (_machine_RebootRequest_Mode__Output);
}
