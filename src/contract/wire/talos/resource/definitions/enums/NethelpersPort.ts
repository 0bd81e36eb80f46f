// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersPort = {
  TWISTED_PAIR: 'TWISTED_PAIR',
  AUI: 'AUI',
  MII: 'MII',
  FIBRE: 'FIBRE',
  BNC: 'BNC',
  DIRECT_ATTACH: 'DIRECT_ATTACH',
  NONE: 'NONE',
  OTHER: 'OTHER',
} as const;

export type NethelpersPort =
  | 'TWISTED_PAIR'
  | 0
  | 'AUI'
  | 1
  | 'MII'
  | 2
  | 'FIBRE'
  | 3
  | 'BNC'
  | 4
  | 'DIRECT_ATTACH'
  | 5
  | 'NONE'
  | 239
  | 'OTHER'
  | 255

export type NethelpersPort__Output = typeof NethelpersPort[keyof typeof NethelpersPort]
