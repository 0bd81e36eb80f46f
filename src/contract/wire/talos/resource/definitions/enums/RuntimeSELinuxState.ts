// Original file: protos/resource/definitions/enums/enums.proto

export const RuntimeSELinuxState = {
  SE_LINUX_STATE_DISABLED: 'SE_LINUX_STATE_DISABLED',
  SE_LINUX_STATE_PERMISSIVE: 'SE_LINUX_STATE_PERMISSIVE',
  SE_LINUX_STATE_ENFORCING: 'SE_LINUX_STATE_ENFORCING',
} as const;

export type RuntimeSELinuxState =
  | 'SE_LINUX_STATE_DISABLED'
  | 0
  | 'SE_LINUX_STATE_PERMISSIVE'
  | 1
  | 'SE_LINUX_STATE_ENFORCING'
  | 2

export type RuntimeSELinuxState__Output = typeof RuntimeSELinuxState[keyof typeof RuntimeSELinuxState]
