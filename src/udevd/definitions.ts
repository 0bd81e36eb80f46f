// The resource types udevd publishes (owner 'udevd', see src/contract/owners.ts), as data.
// machined registers `deviceDefinitions` with the others; this file imports nothing but the
// definition type, so it can move to the contract layer as it is.
import type { ResourceDefinition } from '../state/definitions.ts';

export const DEVICE_NAMESPACE = 'runtime';
export const DISK_TYPE = 'Disks.block.bronze.dev';
export const BLOCK_DEVICE_TYPE = 'BlockDevices.block.bronze.dev';

/** A whole disk with media (size > 0); id: the kernel name ('sda', 'nvme0n1', 'loop0'). */
export interface DiskSpec {
  /** '/dev/sda'. */
  devPath: string;
  /** Bytes. */
  size: number;
  /** '10 GB' (decimal units, as talosctl shows). */
  prettySize: string;
  ioSize: number;
  sectorSize: number;
  readonly: boolean;
  cdrom: boolean;
  model: string;
  serial: string;
  modalias: string;
  wwid: string;
  /** Under /sys/devices: '/pci0000:00/0000:00:04.0/virtio2'. */
  busPath: string;
  subSystem: string;
  /** 'virtio', 'nvme', 'sata', 'scsi', 'usb', 'mmc', or '' (virtual). */
  transport: string;
  rotational: boolean;
  removable: boolean;
  /** Its /dev/disk/by-* links, absolute. */
  symlinks: string[];
}

/** Every block device, disks and partitions; id: the kernel name. */
export interface BlockDeviceSpec {
  type: 'disk' | 'partition';
  devPath: string;
  major: number;
  minor: number;
  /** The disk of a partition; '' for a disk. */
  parent: string;
  /** 0 for a disk. */
  partitionNumber: number;
  size: number;
  prettySize: string;
  readonly: boolean;
  /** The partition table on a disk: 'gpt', 'dos' or ''. */
  ptType: string;
  ptUuid: string;
  /** Filesystem found on the device: 'xfs', 'ext4', 'vfat', 'squashfs', 'iso9660', … or ''. */
  fsType: string;
  label: string;
  uuid: string;
  /** Of a partition, from its disk's table. */
  partLabel: string;
  partUuid: string;
  partType: string;
  symlinks: string[];
}

export const disksDefinition: ResourceDefinition = {
  type: DISK_TYPE,
  displayType: 'Disk',
  aliases: ['disk', 'disks'],
  defaultNamespace: DEVICE_NAMESPACE,
  printColumns: [
    { name: 'Size', jsonPath: '{.prettySize}' },
    { name: 'Read Only', jsonPath: '{.readonly}' },
    { name: 'Transport', jsonPath: '{.transport}' },
    { name: 'Rotational', jsonPath: '{.rotational}' },
    { name: 'WWID', jsonPath: '{.wwid}' },
    { name: 'Model', jsonPath: '{.model}' },
    { name: 'Serial', jsonPath: '{.serial}' },
  ],
};

export const blockDevicesDefinition: ResourceDefinition = {
  type: BLOCK_DEVICE_TYPE,
  displayType: 'BlockDevice',
  aliases: ['blockdevice', 'blockdevices', 'bd'],
  defaultNamespace: DEVICE_NAMESPACE,
  printColumns: [
    { name: 'Type', jsonPath: '{.type}' },
    { name: 'Parent', jsonPath: '{.parent}' },
    { name: 'Size', jsonPath: '{.prettySize}' },
    { name: 'FS Type', jsonPath: '{.fsType}' },
    { name: 'Label', jsonPath: '{.label}' },
    { name: 'UUID', jsonPath: '{.uuid}' },
    { name: 'Part Label', jsonPath: '{.partLabel}' },
  ],
};

export const deviceDefinitions: readonly ResourceDefinition[] = [disksDefinition, blockDevicesDefinition];

/** Bytes in decimal units with go-humanize's rounding: '512 B', '1.5 GB', '10 GB'. */
export function prettySize(bytes: number): string {
  if (bytes < 10) return `${bytes} B`;
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  const e = Math.min(Math.floor(Math.log(bytes) / Math.log(1000)), units.length - 1);
  const v = Math.floor((bytes / 1000 ** e) * 10 + 0.5) / 10;
  return `${v < 10 ? v.toFixed(1) : v.toFixed(0)} ${units[e]}`;
}
