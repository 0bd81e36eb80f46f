// Original file: protos/resource/definitions/block/block.proto

import type { BlockVolumePhase as _talos_resource_definitions_enums_BlockVolumePhase, BlockVolumePhase__Output as _talos_resource_definitions_enums_BlockVolumePhase__Output } from '../../../../talos/resource/definitions/enums/BlockVolumePhase.ts';
import type { BlockFilesystemType as _talos_resource_definitions_enums_BlockFilesystemType, BlockFilesystemType__Output as _talos_resource_definitions_enums_BlockFilesystemType__Output } from '../../../../talos/resource/definitions/enums/BlockFilesystemType.ts';
import type { BlockEncryptionProviderType as _talos_resource_definitions_enums_BlockEncryptionProviderType, BlockEncryptionProviderType__Output as _talos_resource_definitions_enums_BlockEncryptionProviderType__Output } from '../../../../talos/resource/definitions/enums/BlockEncryptionProviderType.ts';
import type { MountSpec as _talos_resource_definitions_block_MountSpec, MountSpec__Output as _talos_resource_definitions_block_MountSpec__Output } from '../../../../talos/resource/definitions/block/MountSpec.ts';
import type { BlockVolumeType as _talos_resource_definitions_enums_BlockVolumeType, BlockVolumeType__Output as _talos_resource_definitions_enums_BlockVolumeType__Output } from '../../../../talos/resource/definitions/enums/BlockVolumeType.ts';
import type { Long } from '@grpc/proto-loader';

export interface VolumeStatusSpec {
  'phase'?: (_talos_resource_definitions_enums_BlockVolumePhase);
  'location'?: (string);
  'error_message'?: (string);
  'uuid'?: (string);
  'partition_uuid'?: (string);
  'pre_fail_phase'?: (_talos_resource_definitions_enums_BlockVolumePhase);
  'parent_location'?: (string);
  'partition_index'?: (number | string | Long);
  'size'?: (number | string | Long);
  'filesystem'?: (_talos_resource_definitions_enums_BlockFilesystemType);
  'mount_location'?: (string);
  'encryption_provider'?: (_talos_resource_definitions_enums_BlockEncryptionProviderType);
  'pretty_size'?: (string);
  'encryption_failed_syncs'?: (string)[];
  'mount_spec'?: (_talos_resource_definitions_block_MountSpec | null);
  'type'?: (_talos_resource_definitions_enums_BlockVolumeType);
}

export interface VolumeStatusSpec__Output {
  'phase': (_talos_resource_definitions_enums_BlockVolumePhase__Output);
  'location': (string);
  'error_message': (string);
  'uuid': (string);
  'partition_uuid': (string);
  'pre_fail_phase': (_talos_resource_definitions_enums_BlockVolumePhase__Output);
  'parent_location': (string);
  'partition_index': (string);
  'size': (string);
  'filesystem': (_talos_resource_definitions_enums_BlockFilesystemType__Output);
  'mount_location': (string);
  'encryption_provider': (_talos_resource_definitions_enums_BlockEncryptionProviderType__Output);
  'pretty_size': (string);
  'encryption_failed_syncs': (string)[];
  'mount_spec': (_talos_resource_definitions_block_MountSpec__Output | null);
  'type': (_talos_resource_definitions_enums_BlockVolumeType__Output);
}
