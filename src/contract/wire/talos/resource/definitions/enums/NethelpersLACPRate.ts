// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersLACPRate = {
  LACP_RATE_SLOW: 'LACP_RATE_SLOW',
  LACP_RATE_FAST: 'LACP_RATE_FAST',
} as const;

export type NethelpersLACPRate =
  | 'LACP_RATE_SLOW'
  | 0
  | 'LACP_RATE_FAST'
  | 1

export type NethelpersLACPRate__Output = typeof NethelpersLACPRate[keyof typeof NethelpersLACPRate]
