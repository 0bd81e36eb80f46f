import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { populate } from './testing-sysfs.ts';
import { listBlockDevices, readBlockDevice, sanitizeId, transportOf } from './sysfs.ts';

let sys: string;
let paths: Record<string, string>;

beforeAll(() => {
  sys = fs.mkdtempSync(path.join(os.tmpdir(), 'udevd-sys-'));
  paths = populate(sys);
});
afterAll(() => fs.rmSync(sys, { recursive: true, force: true }));

const read = (name: string) => {
  const p = paths[name] ?? `${paths[name.replace(/p?\d+$/, '')]}/${name}`;
  const d = readBlockDevice(sys, p);
  if (!d) throw new Error(`${name} not found`);
  return d;
};

describe('readBlockDevice', () => {
  it('virtio-blk disk and partition', () => {
    expect(read('vda')).toMatchObject({
      name: 'vda',
      devname: 'vda',
      type: 'disk',
      major: 252,
      minor: 0,
      parent: '',
      size: 16384 * 512,
      transport: 'virtio',
      serial: 'BRONZE-DISK-1',
      vendor: '',
      modalias: 'virtio:d00000002v00001AF4',
      busPath: '/pci0000:00/0000:00:04.0/virtio2',
      byId: ['virtio-BRONZE-DISK-1'],
      byPath: 'pci-0000:00:04.0',
      diskseq: 7,
      rotational: false,
    });
    expect(read('vda1')).toMatchObject({
      type: 'partition',
      parent: 'vda',
      partitionNumber: 1,
      partitionStart: 2048 * 512,
      partitionName: 'EFI',
      size: 4096 * 512,
      transport: 'virtio',
      byId: ['virtio-BRONZE-DISK-1-part1'],
      byPath: 'pci-0000:00:04.0-part1',
    });
  });

  it('NVMe namespace', () => {
    expect(read('nvme0n1')).toMatchObject({
      transport: 'nvme',
      model: 'Samsung SSD 970 EVO 1TB',
      serial: 'S467NX0M123456',
      wwid: 'eui.0025388b71b45b17',
      byId: ['nvme-Samsung_SSD_970_EVO_1TB_S467NX0M123456', 'nvme-eui.0025388b71b45b17'],
      byPath: 'pci-0000:01:00.0-nvme-1',
    });
    expect(read('nvme0n1p1')).toMatchObject({ parent: 'nvme0n1', byPath: 'pci-0000:01:00.0-nvme-1-part1', byId: expect.arrayContaining(['nvme-eui.0025388b71b45b17-part1']) });
  });

  it('SATA disk through libata', () => {
    expect(read('sda')).toMatchObject({
      transport: 'sata',
      model: 'QEMU HARDDISK',
      serial: 'QM00001',
      wwid: 'naa.5000C500A1B2C3D4',
      rotational: true,
      byId: ['ata-QEMU_HARDDISK_QM00001', 'wwn-0x5000c500a1b2c3d4'],
      byPath: 'pci-0000:00:1f.2-ata-1.0',
    });
  });

  it('virtio-scsi disk: host numbers relative to the adapter', () => {
    expect(read('sdb')).toMatchObject({ transport: 'scsi', byId: ['scsi-QEMU_QEMU_HARDDISK_drive-scsi0'], byPath: 'pci-0000:00:05.0-scsi-0:0:1:0' });
  });

  it('USB stick', () => {
    expect(read('sdc')).toMatchObject({
      transport: 'usb',
      removable: true,
      serial: '4C530001',
      byId: ['usb-SanDisk_Ultra_4C530001-0:0'],
      byPath: 'pci-0000:00:14.0-usb-0:1:1.0-scsi-0:0:0:0',
    });
  });

  it('CD-ROM without media', () => {
    expect(read('sr0')).toMatchObject({ cdrom: true, size: 0, transport: 'sata', byPath: 'pci-0000:00:1f.2-ata-2.0' });
  });

  it('MMC card on a platform bus', () => {
    expect(read('mmcblk0')).toMatchObject({ transport: 'mmc', model: 'SD32G', serial: '0x12345678', byId: ['mmc-SD32G_0x12345678'], byPath: 'platform-fe340000.mmc' });
  });

  it('loop device: virtual, no persistent names', () => {
    expect(read('loop0')).toMatchObject({ transport: '', byId: [], byPath: '', busPath: '/virtual', size: 0 });
  });

  it('a device that is gone reads as undefined', () => {
    expect(readBlockDevice(sys, '/devices/virtual/block/loop9')).toBeUndefined();
  });
});

describe('listBlockDevices', () => {
  it('lists disks before partitions', () => {
    const names = listBlockDevices(sys).map((d) => d.name);
    expect(names).toEqual(['loop0', 'mmcblk0', 'nvme0n1', 'sda', 'sdb', 'sdc', 'sr0', 'vda', 'nvme0n1p1', 'vda1', 'vda2']);
  });

  it('reads the real /sys without throwing', () => {
    for (const d of listBlockDevices('/sys')) expect(() => readBlockDevice('/sys', d.devpath)).not.toThrow();
  });
});

describe('helpers', () => {
  it('transportOf', () => {
    expect(transportOf('/devices/pci0000:00/0000:00:02.0/virtio1/block/vda')).toBe('virtio');
    expect(transportOf('/devices/virtual/block/loop0')).toBe('');
  });

  it('sanitizeId collapses white space and replaces what udev replaces', () => {
    expect(sanitizeId('  WDC  WD10EZEX-00B  ')).toBe('WDC_WD10EZEX-00B');
    expect(sanitizeId('a/b\\c"d')).toBe('a_b_c_d');
    expect(sanitizeId('Grüße')).toBe('Grüße');
  });
});
