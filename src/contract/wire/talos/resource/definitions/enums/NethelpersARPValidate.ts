// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersARPValidate = {
  ARP_VALIDATE_NONE: 'ARP_VALIDATE_NONE',
  ARP_VALIDATE_ACTIVE: 'ARP_VALIDATE_ACTIVE',
  ARP_VALIDATE_BACKUP: 'ARP_VALIDATE_BACKUP',
  ARP_VALIDATE_ALL: 'ARP_VALIDATE_ALL',
  ARP_VALIDATE_FILTER: 'ARP_VALIDATE_FILTER',
  ARP_VALIDATE_FILTER_ACTIVE: 'ARP_VALIDATE_FILTER_ACTIVE',
  ARP_VALIDATE_FILTER_BACKUP: 'ARP_VALIDATE_FILTER_BACKUP',
} as const;

export type NethelpersARPValidate =
  | 'ARP_VALIDATE_NONE'
  | 0
  | 'ARP_VALIDATE_ACTIVE'
  | 1
  | 'ARP_VALIDATE_BACKUP'
  | 2
  | 'ARP_VALIDATE_ALL'
  | 3
  | 'ARP_VALIDATE_FILTER'
  | 4
  | 'ARP_VALIDATE_FILTER_ACTIVE'
  | 5
  | 'ARP_VALIDATE_FILTER_BACKUP'
  | 6

export type NethelpersARPValidate__Output = typeof NethelpersARPValidate[keyof typeof NethelpersARPValidate]
