// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersDuplex = {
  HALF: 'HALF',
  FULL: 'FULL',
  UNKNOWN: 'UNKNOWN',
} as const;

export type NethelpersDuplex =
  | 'HALF'
  | 0
  | 'FULL'
  | 1
  | 'UNKNOWN'
  | 255

export type NethelpersDuplex__Output = typeof NethelpersDuplex[keyof typeof NethelpersDuplex]
