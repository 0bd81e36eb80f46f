// Original file: protos/common/common.proto

export const Code = {
  FATAL: 'FATAL',
  LOCKED: 'LOCKED',
  CANCELED: 'CANCELED',
} as const;

export type Code =
  | 'FATAL'
  | 0
  | 'LOCKED'
  | 1
  | 'CANCELED'
  | 2

export type Code__Output = typeof Code[keyof typeof Code]
