// VolumeStatuses.block.talos.dev (namespace runtime, id the volume's label: STATE, EPHEMERAL):
// what became of each of the node's system volumes at boot: mounted (ready), found but not
// mountable (failed, with the error), or absent (missing: the node runs from memory). machined
// writes it (src/machined/volumes.ts finds and mounts the volumes). Talos:
// pkg/machinery/resources/block/volume_status.go, api/resource/definitions/block/block.proto
// (VolumeStatusSpec); the YAML keys are Talos's.
import type { ResourceDefinition } from './definition.ts';

export const VOLUME_STATUS_TYPE = 'VolumeStatuses.block.talos.dev';
export const VOLUME_STATUS_NAMESPACE = 'runtime';

/** Talos's VolumePhase names (enums.proto BlockVolumePhase). */
export type VolumePhase = 'waiting' | 'failed' | 'missing' | 'located' | 'provisioned' | 'prepared' | 'ready' | 'closed';
/** Talos's VolumeType names; Bronze's system volumes are partitions. */
export type VolumeType = 'partition' | 'disk' | 'tmpfs' | 'directory';
/** Talos's FilesystemType names. */
export type FilesystemType = 'none' | 'xfs' | 'vfat' | 'ext4';

export interface VolumeStatusSpec {
  phase: VolumePhase;
  /** The phase before it failed (a volume that failed while being mounted was located). */
  preFailPhase?: VolumePhase;
  type: VolumeType;
  /** The partition's device, e.g. /dev/vda5. */
  location?: string;
  /** What is mounted: the location, or the dm-crypt device of an encrypted volume (/dev/dm-0). */
  mountLocation?: string;
  /** Set when the volume is encrypted: Talos's provider name. */
  encryptionProvider?: 'luks2';
  /** Configured keys that could not be synced to the volume's keyslots, and why. */
  encryptionFailedSyncs?: string[];
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

const PHASES: readonly VolumePhase[] = ['waiting', 'failed', 'missing', 'located', 'provisioned', 'prepared', 'ready', 'closed'];
const TYPES: readonly VolumeType[] = ['partition', 'disk', 'tmpfs', 'directory'];
const FILESYSTEMS: readonly FilesystemType[] = ['none', 'xfs', 'vfat', 'ext4'];

export const volumeStatusDefinition: ResourceDefinition<VolumeStatusSpec> = {
  type: VOLUME_STATUS_TYPE,
  displayType: 'VolumeStatus',
  // Talos lists none; COSI adds the initials ('vs') by itself.
  aliases: [],
  defaultNamespace: VOLUME_STATUS_NAMESPACE,
  owner: 'machined',
  printColumns: [
    { name: 'Type', jsonPath: '{.type}' },
    { name: 'Phase', jsonPath: '{.phase}' },
    { name: 'Location', jsonPath: '{.location}' },
    { name: 'Size', jsonPath: '{.prettySize}' },
  ],
  proto: {
    message: 'talos.resource.definitions.block.VolumeStatusSpec',
    fields: {
      phase: { as: (p: string) => PHASES.indexOf(p as never) },
      pre_fail_phase: { as: (p: string) => (p ? PHASES.indexOf(p as never) : 0) },
      filesystem: { as: (f: string) => Math.max(0, FILESYSTEMS.indexOf(f as never)) },
      encryption_provider: { as: (p: string) => (p === 'luks2' ? 1 : 0) },
      type: { as: (t: string) => Math.max(0, TYPES.indexOf(t as never)) },
    },
  },
};
