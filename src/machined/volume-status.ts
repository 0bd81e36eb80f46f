// VolumeStatuses.block.talos.dev (namespace runtime, id the volume's label: STATE, EPHEMERAL):
// what became of each of the node's system volumes at boot: mounted (ready), found but not
// mountable (failed, with the error), or absent (missing: the node runs from memory). machined
// writes it (src/machined/volumes.ts finds and mounts the volumes). Talos:
// pkg/machinery/resources/block/volume_status.go, api/resource/definitions/block/block.proto
// (VolumeStatusSpec); the YAML keys below are Talos's. Self-contained (it imports only the
// definition's type), so that it can move to the contract layer as it is.
import type { ResourceDefinition } from '../state/definitions.ts';

export const VOLUME_STATUS_TYPE = 'VolumeStatuses.block.talos.dev';
export const VOLUME_STATUS_NAMESPACE = 'runtime';

/** Talos's VolumePhase names (enums.proto BlockVolumePhase: waiting 0, ready 1, failed 2, missing 3, located 4, provisioned 5). */
export type VolumePhase = 'waiting' | 'ready' | 'failed' | 'missing' | 'located' | 'provisioned';
/** Talos's VolumeType names (partition 0, disk 1, tmpfs 2, directory 3, ...); Bronze's system volumes are partitions. */
export type VolumeType = 'partition' | 'disk' | 'tmpfs' | 'directory';
/** Talos's FilesystemType names (none 0, xfs 1, vfat 2, ext4 3, ...). */
export type FilesystemType = 'none' | 'xfs' | 'vfat' | 'ext4';

export interface VolumeStatusSpec {
  phase: VolumePhase;
  /** The phase before it failed (a volume that failed while being mounted was located). */
  preFailPhase?: VolumePhase;
  type: VolumeType;
  /** The partition's device, e.g. /dev/vda5. */
  location?: string;
  /** What is mounted (the same as location: Bronze's volumes are not encrypted). */
  mountLocation?: string;
  partitionIndex?: number;
  /** The disk holding the partition, e.g. /dev/vda. */
  parentLocation?: string;
  /** The filesystem's UUID, when one was read. */
  uuid?: string;
  partitionUUID?: string;
  size?: number;
  prettySize?: string;
  filesystem?: FilesystemType;
  mountSpec?: { targetPath: string };
  errorMessage?: string;
}

export const volumeStatusDefinition: ResourceDefinition = {
  type: VOLUME_STATUS_TYPE,
  displayType: 'VolumeStatus',
  // Talos lists none; COSI adds the initials ('vs') by itself, Bronze's registry does not.
  aliases: ['vs'],
  defaultNamespace: VOLUME_STATUS_NAMESPACE,
  printColumns: [
    { name: 'Type', jsonPath: '{.type}' },
    { name: 'Phase', jsonPath: '{.phase}' },
    { name: 'Location', jsonPath: '{.location}' },
    { name: 'Size', jsonPath: '{.prettySize}' },
  ],
};
