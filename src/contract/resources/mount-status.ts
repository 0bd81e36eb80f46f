// MountStatuses.runtime.talos.dev: the system partitions machined has mounted (STATE,
// EPHEMERAL), id the partition's label. Talos: pkg/machinery/resources/runtime/mount_status.go,
// which skips the automatic aliases (the type's plural names block.talos.dev's MountStatuses
// too) and is known as 'mounts'.
import type { ResourceDefinition } from './definition.ts';

export interface MountStatusSpec {
  /** The device: '/dev/vda5'. */
  source: string;
  target: string;
  filesystemType: string;
  options: string[];
  encrypted: boolean;
}

export const MOUNT_STATUS_TYPE = 'MountStatuses.runtime.talos.dev';

export const mountStatusDefinition: ResourceDefinition<MountStatusSpec> = {
  type: MOUNT_STATUS_TYPE,
  displayType: 'MountStatus',
  aliases: ['mounts'],
  skipAutomaticAliases: true,
  defaultNamespace: 'runtime',
  owner: 'machined',
  printColumns: [
    { name: 'Source', jsonPath: '{.source}' },
    { name: 'Target', jsonPath: '{.target}' },
    { name: 'Filesystem Type', jsonPath: '{.filesystemType}' },
  ],
  proto: {
    message: 'talos.resource.definitions.runtime.MountStatusSpec',
  },
};
