// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersADLACPActive = {
  ADLACP_ACTIVE_OFF: 'ADLACP_ACTIVE_OFF',
  ADLACP_ACTIVE_ON: 'ADLACP_ACTIVE_ON',
} as const;

export type NethelpersADLACPActive =
  | 'ADLACP_ACTIVE_OFF'
  | 0
  | 'ADLACP_ACTIVE_ON'
  | 1

export type NethelpersADLACPActive__Output = typeof NethelpersADLACPActive[keyof typeof NethelpersADLACPActive]
