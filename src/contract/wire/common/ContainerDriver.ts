// Original file: protos/common/common.proto

export const ContainerDriver = {
  CONTAINERD: 'CONTAINERD',
  CRI: 'CRI',
} as const;

export type ContainerDriver =
  | 'CONTAINERD'
  | 0
  | 'CRI'
  | 1

export type ContainerDriver__Output = typeof ContainerDriver[keyof typeof ContainerDriver]
