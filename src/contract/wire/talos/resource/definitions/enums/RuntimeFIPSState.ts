// Original file: protos/resource/definitions/enums/enums.proto

export const RuntimeFIPSState = {
  FIPS_STATE_DISABLED: 'FIPS_STATE_DISABLED',
  FIPS_STATE_ENABLED: 'FIPS_STATE_ENABLED',
  FIPS_STATE_STRICT: 'FIPS_STATE_STRICT',
} as const;

export type RuntimeFIPSState =
  | 'FIPS_STATE_DISABLED'
  | 0
  | 'FIPS_STATE_ENABLED'
  | 1
  | 'FIPS_STATE_STRICT'
  | 2

export type RuntimeFIPSState__Output = typeof RuntimeFIPSState[keyof typeof RuntimeFIPSState]
