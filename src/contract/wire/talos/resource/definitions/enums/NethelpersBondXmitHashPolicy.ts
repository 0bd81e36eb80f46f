// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersBondXmitHashPolicy = {
  BOND_XMIT_POLICY_LAYER2: 'BOND_XMIT_POLICY_LAYER2',
  BOND_XMIT_POLICY_LAYER34: 'BOND_XMIT_POLICY_LAYER34',
  BOND_XMIT_POLICY_LAYER23: 'BOND_XMIT_POLICY_LAYER23',
  BOND_XMIT_POLICY_ENCAP23: 'BOND_XMIT_POLICY_ENCAP23',
  BOND_XMIT_POLICY_ENCAP34: 'BOND_XMIT_POLICY_ENCAP34',
} as const;

export type NethelpersBondXmitHashPolicy =
  | 'BOND_XMIT_POLICY_LAYER2'
  | 0
  | 'BOND_XMIT_POLICY_LAYER34'
  | 1
  | 'BOND_XMIT_POLICY_LAYER23'
  | 2
  | 'BOND_XMIT_POLICY_ENCAP23'
  | 3
  | 'BOND_XMIT_POLICY_ENCAP34'
  | 4

export type NethelpersBondXmitHashPolicy__Output = typeof NethelpersBondXmitHashPolicy[keyof typeof NethelpersBondXmitHashPolicy]
