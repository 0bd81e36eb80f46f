// Original file: protos/resource/definitions/enums/enums.proto

export const BlockVolumeType = {
  VOLUME_TYPE_PARTITION: 'VOLUME_TYPE_PARTITION',
  VOLUME_TYPE_DISK: 'VOLUME_TYPE_DISK',
  VOLUME_TYPE_TMPFS: 'VOLUME_TYPE_TMPFS',
  VOLUME_TYPE_DIRECTORY: 'VOLUME_TYPE_DIRECTORY',
  VOLUME_TYPE_SYMLINK: 'VOLUME_TYPE_SYMLINK',
  VOLUME_TYPE_OVERLAY: 'VOLUME_TYPE_OVERLAY',
} as const;

export type BlockVolumeType =
  | 'VOLUME_TYPE_PARTITION'
  | 0
  | 'VOLUME_TYPE_DISK'
  | 1
  | 'VOLUME_TYPE_TMPFS'
  | 2
  | 'VOLUME_TYPE_DIRECTORY'
  | 3
  | 'VOLUME_TYPE_SYMLINK'
  | 4
  | 'VOLUME_TYPE_OVERLAY'
  | 5

export type BlockVolumeType__Output = typeof BlockVolumeType[keyof typeof BlockVolumeType]
