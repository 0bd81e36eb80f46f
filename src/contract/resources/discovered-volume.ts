// DiscoveredVolumes.block.talos.dev: what udevd found on each block device (a partition table,
// a filesystem, or nothing), id the kernel name. Talos: pkg/machinery/resources/block/discovered_volume.go
// (snake_case YAML keys). `name` is what was found, as blkid names it ('gpt', 'xfs', 'vfat').
import type { DiscoveredVolumeSpec as DiscoveredVolumeSpecProto } from '../wire/talos/resource/definitions/block/DiscoveredVolumeSpec.ts';
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
    encode: (s): DiscoveredVolumeSpecProto => ({
      dev_path: s.dev_path,
      type: s.type,
      device_path: s.device_path,
      parent: s.parent ?? '',
      parent_dev_path: s.parent_dev_path ?? '',
      size: String(s.size),
      pretty_size: s.pretty_size,
      sector_size: String(s.sector_size ?? 0),
      io_size: String(s.io_size ?? 0),
      name: s.name,
      uuid: s.uuid ?? '',
      label: s.label ?? '',
      partition_uuid: s.partition_uuid ?? '',
      partition_type: s.partition_type ?? '',
      partition_label: s.partition_label ?? '',
      partition_index: String(s.partition_index ?? 0),
    }),
  },
};
