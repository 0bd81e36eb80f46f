// Original file: protos/resource/definitions/enums/enums.proto

export const BlockFilesystemType = {
  FILESYSTEM_TYPE_NONE: 'FILESYSTEM_TYPE_NONE',
  FILESYSTEM_TYPE_XFS: 'FILESYSTEM_TYPE_XFS',
  FILESYSTEM_TYPE_VFAT: 'FILESYSTEM_TYPE_VFAT',
  FILESYSTEM_TYPE_EXT4: 'FILESYSTEM_TYPE_EXT4',
  FILESYSTEM_TYPE_ISO9660: 'FILESYSTEM_TYPE_ISO9660',
  FILESYSTEM_TYPE_SWAP: 'FILESYSTEM_TYPE_SWAP',
} as const;

export type BlockFilesystemType =
  | 'FILESYSTEM_TYPE_NONE'
  | 0
  | 'FILESYSTEM_TYPE_XFS'
  | 1
  | 'FILESYSTEM_TYPE_VFAT'
  | 2
  | 'FILESYSTEM_TYPE_EXT4'
  | 3
  | 'FILESYSTEM_TYPE_ISO9660'
  | 4
  | 'FILESYSTEM_TYPE_SWAP'
  | 5

export type BlockFilesystemType__Output = typeof BlockFilesystemType[keyof typeof BlockFilesystemType]
