// Original file: protos/resource/definitions/enums/enums.proto

export const BlockEncryptionProviderType = {
  ENCRYPTION_PROVIDER_NONE: 'ENCRYPTION_PROVIDER_NONE',
  ENCRYPTION_PROVIDER_LUKS2: 'ENCRYPTION_PROVIDER_LUKS2',
} as const;

export type BlockEncryptionProviderType =
  | 'ENCRYPTION_PROVIDER_NONE'
  | 0
  | 'ENCRYPTION_PROVIDER_LUKS2'
  | 1

export type BlockEncryptionProviderType__Output = typeof BlockEncryptionProviderType[keyof typeof BlockEncryptionProviderType]
