// Original file: protos/inspect/inspect.proto

export const DependencyEdgeType = {
  OUTPUT_EXCLUSIVE: 'OUTPUT_EXCLUSIVE',
  OUTPUT_SHARED: 'OUTPUT_SHARED',
  INPUT_STRONG: 'INPUT_STRONG',
  INPUT_WEAK: 'INPUT_WEAK',
  INPUT_DESTROY_READY: 'INPUT_DESTROY_READY',
} as const;

export type DependencyEdgeType =
  | 'OUTPUT_EXCLUSIVE'
  | 0
  | 'OUTPUT_SHARED'
  | 3
  | 'INPUT_STRONG'
  | 1
  | 'INPUT_WEAK'
  | 2
  | 'INPUT_DESTROY_READY'
  | 4

export type DependencyEdgeType__Output = typeof DependencyEdgeType[keyof typeof DependencyEdgeType]
