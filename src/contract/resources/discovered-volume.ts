// DiscoveredVolumes.block.talos.dev: what udevd found on each block device (a partition table,
// a filesystem, or nothing), id the kernel name. Talos: pkg/machinery/resources/block/discovered_volume.go
// (snake_case YAML keys). `name` is what was found, as blkid names it ('gpt', 'xfs', 'vfat').
import type { ResourceDefinition } from './definition.ts';
import { BLOCK_NAMESPACE } from './disk.ts';

export interface DiscoveredVolumeSpec {
  /** '/dev/vda1'. */
  dev_path: string;
  type: 'disk' | 'partition';
  /** The device under /sys. */
  device_path: string;
  /** The disk of a partition. */
  parent?: string;
  parent_dev_path?: string;
  size: number;
  pretty_size: string;
  sector_size?: number;
  io_size?: number;
  /** 'gpt', 'dos', 'xfs', 'ext4', 'vfat', 'iso9660', 'squashfs', ... or '' when nothing was found. */
  name: string;
  uuid?: string;
  label?: string;
  partition_uuid?: string;
  partition_type?: string;
  partition_label?: string;
  partition_index?: number;
}

export const DISCOVERED_VOLUME_TYPE = 'DiscoveredVolumes.block.talos.dev';

export const discoveredVolumeDefinition: ResourceDefinition<DiscoveredVolumeSpec> = {
  type: DISCOVERED_VOLUME_TYPE,
  displayType: 'DiscoveredVolume',
  aliases: [],
  defaultNamespace: BLOCK_NAMESPACE,
  owner: 'udevd',
  printColumns: [
    { name: 'Type', jsonPath: '{.type}' },
    { name: 'Size', jsonPath: '{.pretty_size}' },
    { name: 'Discovered', jsonPath: '{.name}' },
    { name: 'Label', jsonPath: '{.label}' },
    { name: 'PartitionLabel', jsonPath: '{.partition_label}' },
  ],
  proto: {
    message: 'talos.resource.definitions.block.DiscoveredVolumeSpec',
  },
};
