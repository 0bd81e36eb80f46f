// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersFamily = {
  NETHELPERS_FAMILY_UNSPECIFIED: 'NETHELPERS_FAMILY_UNSPECIFIED',
  FAMILY_INET4: 'FAMILY_INET4',
  FAMILY_INET6: 'FAMILY_INET6',
} as const;

export type NethelpersFamily =
  | 'NETHELPERS_FAMILY_UNSPECIFIED'
  | 0
  | 'FAMILY_INET4'
  | 2
  | 'FAMILY_INET6'
  | 10

export type NethelpersFamily__Output = typeof NethelpersFamily[keyof typeof NethelpersFamily]
