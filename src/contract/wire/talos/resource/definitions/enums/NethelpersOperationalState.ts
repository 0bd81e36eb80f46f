// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersOperationalState = {
  OPER_STATE_UNKNOWN: 'OPER_STATE_UNKNOWN',
  OPER_STATE_NOT_PRESENT: 'OPER_STATE_NOT_PRESENT',
  OPER_STATE_DOWN: 'OPER_STATE_DOWN',
  OPER_STATE_LOWER_LAYER_DOWN: 'OPER_STATE_LOWER_LAYER_DOWN',
  OPER_STATE_TESTING: 'OPER_STATE_TESTING',
  OPER_STATE_DORMANT: 'OPER_STATE_DORMANT',
  OPER_STATE_UP: 'OPER_STATE_UP',
} as const;

export type NethelpersOperationalState =
  | 'OPER_STATE_UNKNOWN'
  | 0
  | 'OPER_STATE_NOT_PRESENT'
  | 1
  | 'OPER_STATE_DOWN'
  | 2
  | 'OPER_STATE_LOWER_LAYER_DOWN'
  | 3
  | 'OPER_STATE_TESTING'
  | 4
  | 'OPER_STATE_DORMANT'
  | 5
  | 'OPER_STATE_UP'
  | 6

export type NethelpersOperationalState__Output = typeof NethelpersOperationalState[keyof typeof NethelpersOperationalState]
