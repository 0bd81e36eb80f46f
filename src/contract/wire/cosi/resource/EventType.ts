// Original file: protos/cosi/v1alpha1/state.proto

export const EventType = {
  CREATED: 'CREATED',
  UPDATED: 'UPDATED',
  DESTROYED: 'DESTROYED',
  BOOTSTRAPPED: 'BOOTSTRAPPED',
  ERRORED: 'ERRORED',
  NOOP: 'NOOP',
} as const;

export type EventType =
  | 'CREATED'
  | 0
  | 'UPDATED'
  | 1
  | 'DESTROYED'
  | 2
  | 'BOOTSTRAPPED'
  | 3
  | 'ERRORED'
  | 4
  | 'NOOP'
  | 5

export type EventType__Output = typeof EventType[keyof typeof EventType]
