// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersARPAllTargets = {
  ARP_ALL_TARGETS_ANY: 'ARP_ALL_TARGETS_ANY',
  ARP_ALL_TARGETS_ALL: 'ARP_ALL_TARGETS_ALL',
} as const;

export type NethelpersARPAllTargets =
  | 'ARP_ALL_TARGETS_ANY'
  | 0
  | 'ARP_ALL_TARGETS_ALL'
  | 1

export type NethelpersARPAllTargets__Output = typeof NethelpersARPAllTargets[keyof typeof NethelpersARPAllTargets]
