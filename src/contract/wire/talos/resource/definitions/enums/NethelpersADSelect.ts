// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersADSelect = {
  AD_SELECT_STABLE: 'AD_SELECT_STABLE',
  AD_SELECT_BANDWIDTH: 'AD_SELECT_BANDWIDTH',
  AD_SELECT_COUNT: 'AD_SELECT_COUNT',
} as const;

export type NethelpersADSelect =
  | 'AD_SELECT_STABLE'
  | 0
  | 'AD_SELECT_BANDWIDTH'
  | 1
  | 'AD_SELECT_COUNT'
  | 2

export type NethelpersADSelect__Output = typeof NethelpersADSelect[keyof typeof NethelpersADSelect]
