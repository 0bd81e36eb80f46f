// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersFailOverMAC = {
  FAIL_OVER_MAC_NONE: 'FAIL_OVER_MAC_NONE',
  FAIL_OVER_MAC_ACTIVE: 'FAIL_OVER_MAC_ACTIVE',
  FAIL_OVER_MAC_FOLLOW: 'FAIL_OVER_MAC_FOLLOW',
} as const;

export type NethelpersFailOverMAC =
  | 'FAIL_OVER_MAC_NONE'
  | 0
  | 'FAIL_OVER_MAC_ACTIVE'
  | 1
  | 'FAIL_OVER_MAC_FOLLOW'
  | 2

export type NethelpersFailOverMAC__Output = typeof NethelpersFailOverMAC[keyof typeof NethelpersFailOverMAC]
