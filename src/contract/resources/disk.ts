// Disks.block.talos.dev: one per whole disk with media, id the kernel name ('vda', 'nvme0n1').
// udevd writes them. Talos: pkg/machinery/resources/block/disk.go (snake_case YAML keys).
import type { ResourceDefinition } from './definition.ts';

export interface DiskSpec {
  /** '/dev/vda'. */
  dev_path: string;
  /** Bytes. */
  size: number;
  /** '10 GB' (decimal units, as go-humanize writes them). */
  pretty_size: string;
  io_size: number;
  sector_size: number;
  readonly: boolean;
  cdrom: boolean;
  model?: string;
  serial?: string;
  modalias?: string;
  wwid?: string;
  /** Under /sys/devices: '/pci0000:00/0000:00:04.0/virtio2'. */
  bus_path?: string;
  sub_system?: string;
  /** 'virtio', 'nvme', 'sata', 'scsi', 'usb', 'mmc', ... */
  transport?: string;
  rotational?: boolean;
  /** Its /dev/disk/by-* links, absolute. */
  symlinks?: string[];
}

export const BLOCK_NAMESPACE = 'runtime';
export const DISK_TYPE = 'Disks.block.talos.dev';

export const diskDefinition: ResourceDefinition<DiskSpec> = {
  type: DISK_TYPE,
  displayType: 'Disk',
  aliases: [],
  defaultNamespace: BLOCK_NAMESPACE,
  owner: 'udevd',
  printColumns: [
    { name: 'Size', jsonPath: '{.pretty_size}' },
    { name: 'Read Only', jsonPath: '{.readonly}' },
    { name: 'Transport', jsonPath: '{.transport}' },
    { name: 'Rotational', jsonPath: '{.rotational}' },
    { name: 'WWID', jsonPath: '{.wwid}' },
    { name: 'Model', jsonPath: '{.model}' },
    { name: 'Serial', jsonPath: '{.serial}' },
  ],
  proto: {
    message: 'talos.resource.definitions.block.DiskSpec',
  },
};

/** Bytes in decimal units with go-humanize's rounding, as Talos writes pretty_size: '512 B', '1.5 GB', '10 GB'. */
export function prettySize(bytes: number): string {
  if (bytes < 10) return `${bytes} B`;
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  const e = Math.min(Math.floor(Math.log(bytes) / Math.log(1000)), units.length - 1);
  const v = Math.floor((bytes / 1000 ** e) * 10 + 0.5) / 10;
  return `${v < 10 ? v.toFixed(1) : v.toFixed(0)} ${units[e]}`;
}
