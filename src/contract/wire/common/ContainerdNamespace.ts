// Original file: protos/common/common.proto

export const ContainerdNamespace = {
  NS_UNKNOWN: 'NS_UNKNOWN',
  NS_SYSTEM: 'NS_SYSTEM',
  NS_CRI: 'NS_CRI',
} as const;

export type ContainerdNamespace =
  | 'NS_UNKNOWN'
  | 0
  | 'NS_SYSTEM'
  | 1
  | 'NS_CRI'
  | 2

export type ContainerdNamespace__Output = typeof ContainerdNamespace[keyof typeof ContainerdNamespace]
