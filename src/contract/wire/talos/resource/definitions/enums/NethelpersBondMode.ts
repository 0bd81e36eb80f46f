// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersBondMode = {
  BOND_MODE_ROUNDROBIN: 'BOND_MODE_ROUNDROBIN',
  BOND_MODE_ACTIVE_BACKUP: 'BOND_MODE_ACTIVE_BACKUP',
  BOND_MODE_XOR: 'BOND_MODE_XOR',
  BOND_MODE_BROADCAST: 'BOND_MODE_BROADCAST',
  BOND_MODE8023_AD: 'BOND_MODE8023_AD',
  BOND_MODE_TLB: 'BOND_MODE_TLB',
  BOND_MODE_ALB: 'BOND_MODE_ALB',
} as const;

export type NethelpersBondMode =
  | 'BOND_MODE_ROUNDROBIN'
  | 0
  | 'BOND_MODE_ACTIVE_BACKUP'
  | 1
  | 'BOND_MODE_XOR'
  | 2
  | 'BOND_MODE_BROADCAST'
  | 3
  | 'BOND_MODE8023_AD'
  | 4
  | 'BOND_MODE_TLB'
  | 5
  | 'BOND_MODE_ALB'
  | 6

export type NethelpersBondMode__Output = typeof NethelpersBondMode[keyof typeof NethelpersBondMode]
