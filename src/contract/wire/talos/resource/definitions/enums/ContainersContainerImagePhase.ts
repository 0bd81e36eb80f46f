// Original file: protos/resource/definitions/enums/enums.proto

export const ContainersContainerImagePhase = {
  CONTAINER_IMAGE_PHASE_PENDING: 'CONTAINER_IMAGE_PHASE_PENDING',
  CONTAINER_IMAGE_PHASE_PULLING: 'CONTAINER_IMAGE_PHASE_PULLING',
  CONTAINER_IMAGE_PHASE_READY: 'CONTAINER_IMAGE_PHASE_READY',
  CONTAINER_IMAGE_PHASE_FAILED: 'CONTAINER_IMAGE_PHASE_FAILED',
} as const;

export type ContainersContainerImagePhase =
  | 'CONTAINER_IMAGE_PHASE_PENDING'
  | 0
  | 'CONTAINER_IMAGE_PHASE_PULLING'
  | 1
  | 'CONTAINER_IMAGE_PHASE_READY'
  | 2
  | 'CONTAINER_IMAGE_PHASE_FAILED'
  | 3

export type ContainersContainerImagePhase__Output = typeof ContainersContainerImagePhase[keyof typeof ContainersContainerImagePhase]
