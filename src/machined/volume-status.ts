// The VolumeStatuses resource machined writes: its definition lives in the contract layer.
export { VOLUME_STATUS_NAMESPACE, VOLUME_STATUS_TYPE, volumeStatusDefinition, type FilesystemType, type VolumePhase, type VolumeStatusSpec, type VolumeType } from '../contract/resources/volume-status.ts';
