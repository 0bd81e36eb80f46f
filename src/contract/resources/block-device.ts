// BlockDevices.block.talos.dev: every block device, disks and partitions, id the kernel name.
// udevd writes them. Talos: pkg/machinery/resources/block/device.go. What is on a device
// (partition table, filesystem) is a DiscoveredVolume.
import type { ResourceDefinition } from './definition.ts';
import { BLOCK_NAMESPACE } from './disk.ts';

export interface BlockDeviceSpec {
  type: 'disk' | 'partition';
  major: number;
  minor: number;
  /** The kernel's PARTNAME (the GPT name) of a partition. */
  partitionName?: string;
  partitionNumber?: number;
  /** The device under /sys: '/sys/devices/pci0000:00/0000:00:04.0/virtio2/block/vda'. */
  devicePath: string;
  /** Grows each time udevd sees the device change (it is probed again then). */
  generation: number;
  /** The disk of a partition. */
  parent?: string;
}

export const BLOCK_DEVICE_TYPE = 'BlockDevices.block.talos.dev';

export const blockDeviceDefinition: ResourceDefinition<BlockDeviceSpec> = {
  type: BLOCK_DEVICE_TYPE,
  displayType: 'BlockDevice',
  aliases: [],
  defaultNamespace: BLOCK_NAMESPACE,
  owner: 'udevd',
  printColumns: [
    { name: 'Type', jsonPath: '{.type}' },
    { name: 'PartitionName', jsonPath: '{.partitionName}' },
    { name: 'Generation', jsonPath: '{.generation}' },
  ],
  proto: {
    message: 'talos.resource.definitions.block.DeviceSpec',
  },
};
