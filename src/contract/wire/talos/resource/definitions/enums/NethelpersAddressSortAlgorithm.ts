// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersAddressSortAlgorithm = {
  ADDRESS_SORT_ALGORITHM_V1: 'ADDRESS_SORT_ALGORITHM_V1',
  ADDRESS_SORT_ALGORITHM_V2: 'ADDRESS_SORT_ALGORITHM_V2',
} as const;

export type NethelpersAddressSortAlgorithm =
  | 'ADDRESS_SORT_ALGORITHM_V1'
  | 0
  | 'ADDRESS_SORT_ALGORITHM_V2'
  | 1

export type NethelpersAddressSortAlgorithm__Output = typeof NethelpersAddressSortAlgorithm[keyof typeof NethelpersAddressSortAlgorithm]
