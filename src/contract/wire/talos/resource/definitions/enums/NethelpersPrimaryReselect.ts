// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersPrimaryReselect = {
  PRIMARY_RESELECT_ALWAYS: 'PRIMARY_RESELECT_ALWAYS',
  PRIMARY_RESELECT_BETTER: 'PRIMARY_RESELECT_BETTER',
  PRIMARY_RESELECT_FAILURE: 'PRIMARY_RESELECT_FAILURE',
} as const;

export type NethelpersPrimaryReselect =
  | 'PRIMARY_RESELECT_ALWAYS'
  | 0
  | 'PRIMARY_RESELECT_BETTER'
  | 1
  | 'PRIMARY_RESELECT_FAILURE'
  | 2

export type NethelpersPrimaryReselect__Output = typeof NethelpersPrimaryReselect[keyof typeof NethelpersPrimaryReselect]
