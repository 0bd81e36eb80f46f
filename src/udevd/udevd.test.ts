import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Publisher, StatePublisher } from '../daemon/publisher.ts';
import type { Logger } from '../lib/log.ts';
import { MemoryState } from '../state/memory.ts';
import { BLOCK_DEVICE_TYPE, type BlockDeviceSpec } from '../contract/resources/block-device.ts';
import { BLOCK_SYMLINK_TYPE, type BlockSymlinkSpec } from '../contract/resources/block-symlink.ts';
import { DISCOVERED_VOLUME_TYPE, type DiscoveredVolumeSpec } from '../contract/resources/discovered-volume.ts';
import { DISK_TYPE, type DiskSpec } from '../contract/resources/disk.ts';
import { addFakeDisk, populate, removeFakeDisk } from '../disk/testing-sysfs.ts';
import { ManualUeventSource } from './uevent-socket.ts';
import { buildGpt, ext4Superblock, fatImage, xfsSuperblock } from '../disk/testing-images.ts';
import { formatUevent } from './uevent.ts';
import { Udevd, isNoMedium } from './udevd.ts';

const ESP = 'c12a7328-f81f-11d2-ba4b-00a0c93ec93b';
const LINUX = '0fc63daf-8483-4772-8e79-3d69d8477de4';
const P1 = '11111111-2222-4333-8444-555555555555';
const P2 = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
const EXT_UUID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

const logs: string[] = [];
const log: Logger = { info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(`ERROR ${m}`) };

let root: string;
let sys: string;
let nodes: string;
let dev: string;
let paths: Record<string, string>;
let state: MemoryState;
let publisher: Publisher;
let source: ManualUeventSource;
let udevd: Udevd | undefined;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'udevd-core-'));
  sys = path.join(root, 'sys');
  nodes = path.join(root, 'nodes');
  dev = path.join(root, 'dev');
  fs.mkdirSync(nodes);
  paths = populate(sys);
  // Device contents: a GPT on vda with a FAT16 ESP and an ext4 partition.
  fs.writeFileSync(
    path.join(nodes, 'vda'),
    buildGpt({
      sectors: 16384,
      diskGuid: '6d1f0a24-3b8e-4c5b-9a0e-2f7d3c1b5a49',
      partitions: [
        { type: ESP, uuid: P1, name: 'EFI', first: 2048, last: 6143 },
        { type: LINUX, uuid: P2, name: 'STATE', first: 6144, last: 14335 },
      ],
    }),
  );
  fs.writeFileSync(path.join(nodes, 'vda1'), fatImage({ fat32: false, serial: 0xdeadbeef, bootLabel: 'EFI' }));
  fs.writeFileSync(path.join(nodes, 'vda2'), ext4Superblock({ uuid: EXT_UUID, label: 'STATE' }));
  for (const n of ['nvme0n1', 'nvme0n1p1', 'sda', 'sdb', 'sdc', 'mmcblk0']) fs.writeFileSync(path.join(nodes, n), '');
  state = new MemoryState();
  publisher = new StatePublisher(state, 'udevd');
  source = new ManualUeventSource();
  logs.length = 0;
});

afterEach(async () => {
  await udevd?.stop();
  udevd = undefined;
  fs.rmSync(root, { recursive: true, force: true });
});

const start = async (extra: Partial<Parameters<typeof Udevd.start>[0]> = {}) => {
  udevd = await Udevd.start({ publisher, log, devRoot: dev, nodeRoot: nodes, sysRoot: sys, source, trigger: false, ...extra });
  await udevd.settled();
  return udevd;
};
const ids = async (type: string) => (await state.list('runtime', type)).map((r) => r.metadata.id);
const spec = async <S>(type: string, id: string) => (await state.get<S>('runtime', type, id)).spec;
const link = (l: string) => fs.readlinkSync(path.join(dev, l));
const gone = (l: string) => !fs.existsSync(path.join(dev, l)) && !isLink(path.join(dev, l));
const isLink = (p: string) => {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
};

describe('Udevd', () => {
  it('coldplugs every block device: resources and links', async () => {
    await start();
    expect(await ids(DISK_TYPE)).toEqual(['mmcblk0', 'nvme0n1', 'sda', 'sdb', 'sdc', 'vda']);
    expect(await ids(BLOCK_DEVICE_TYPE)).toEqual(['loop0', 'mmcblk0', 'nvme0n1', 'nvme0n1p1', 'sda', 'sdb', 'sdc', 'sr0', 'vda', 'vda1', 'vda2']);

    expect(await ids(DISCOVERED_VOLUME_TYPE)).toEqual(await ids(BLOCK_DEVICE_TYPE));
    expect(await ids(BLOCK_SYMLINK_TYPE)).toEqual(await ids(BLOCK_DEVICE_TYPE));

    // Talos's DiskSpec keys; what sysfs does not give (model, wwid) is left out.
    expect(await spec<DiskSpec>(DISK_TYPE, 'vda')).toEqual({
      dev_path: path.join(nodes, 'vda'),
      size: 16384 * 512,
      pretty_size: '8.4 MB',
      io_size: 512,
      sector_size: 512,
      readonly: false,
      cdrom: false,
      serial: 'BRONZE-DISK-1',
      modalias: 'virtio:d00000002v00001AF4',
      bus_path: '/pci0000:00/0000:00:04.0/virtio2',
      sub_system: '/sys/class/block',
      transport: 'virtio',
      symlinks: [path.join(dev, 'disk/by-id/virtio-BRONZE-DISK-1'), path.join(dev, 'disk/by-path/pci-0000:00:04.0')],
    });
    expect(await spec<DiskSpec>(DISK_TYPE, 'sda')).toMatchObject({ transport: 'sata', model: 'QEMU HARDDISK', serial: 'QM00001', wwid: 'naa.5000C500A1B2C3D4', rotational: true });

    expect(await spec<BlockDeviceSpec>(BLOCK_DEVICE_TYPE, 'vda')).toEqual({ type: 'disk', major: 252, minor: 0, devicePath: path.join(sys, paths.vda!), generation: 1 });
    expect(await spec<BlockDeviceSpec>(BLOCK_DEVICE_TYPE, 'vda1')).toEqual({
      type: 'partition',
      major: 252,
      minor: 1,
      partitionName: 'EFI',
      partitionNumber: 1,
      devicePath: path.join(sys, paths.vda!, 'vda1'),
      generation: 1,
      parent: 'vda',
    });
    expect(await spec<DiscoveredVolumeSpec>(DISCOVERED_VOLUME_TYPE, 'vda')).toEqual({
      dev_path: path.join(nodes, 'vda'),
      type: 'disk',
      device_path: path.join(sys, paths.vda!),
      size: 16384 * 512,
      pretty_size: '8.4 MB',
      sector_size: 512,
      io_size: 512,
      name: 'gpt',
      uuid: '6d1f0a24-3b8e-4c5b-9a0e-2f7d3c1b5a49',
    });
    expect(await spec<DiscoveredVolumeSpec>(DISCOVERED_VOLUME_TYPE, 'vda1')).toMatchObject({
      type: 'partition',
      parent: 'vda',
      parent_dev_path: path.join(nodes, 'vda'),
      name: 'vfat',
      label: 'EFI',
      uuid: 'DEAD-BEEF',
      partition_label: 'EFI',
      partition_uuid: P1,
      partition_type: ESP,
      partition_index: 1,
    });
    expect(await spec<DiscoveredVolumeSpec>(DISCOVERED_VOLUME_TYPE, 'vda2')).toMatchObject({ name: 'ext4', label: 'STATE', uuid: EXT_UUID, partition_label: 'STATE', partition_uuid: P2 });
    expect(await spec<BlockSymlinkSpec>(BLOCK_SYMLINK_TYPE, 'vda2')).toEqual({
      paths: expect.arrayContaining([path.join(dev, 'disk/by-label/STATE'), path.join(dev, `disk/by-uuid/${EXT_UUID}`), path.join(dev, 'disk/by-partlabel/STATE')]),
    });

    expect(link('disk/by-id/virtio-BRONZE-DISK-1')).toBe('../../vda');
    expect(link('disk/by-id/virtio-BRONZE-DISK-1-part2')).toBe('../../vda2');
    expect(link('disk/by-path/pci-0000:00:04.0-part1')).toBe('../../vda1');
    expect(link('disk/by-label/EFI')).toBe('../../vda1');
    expect(link('disk/by-uuid/DEAD-BEEF')).toBe('../../vda1');
    expect(link(`disk/by-uuid/${EXT_UUID}`)).toBe('../../vda2');
    expect(link('disk/by-partlabel/STATE')).toBe('../../vda2');
    expect(link(`disk/by-partuuid/${P1}`)).toBe('../../vda1');
    expect(link('disk/by-id/nvme-eui.0025388b71b45b17-part1')).toBe('../../nvme0n1p1');
    expect(link('disk/by-path/pci-0000:00:14.0-usb-0:1:1.0-scsi-0:0:0:0')).toBe('../../sdc');
    expect(link('disk/by-id/wwn-0x5000c500a1b2c3d4')).toBe('../../sda');
  });

  it('follows hot-add, change and removal', async () => {
    await start();
    const devpath = addFakeDisk(sys, { name: 'vdb', at: 'pci0000:00/0000:00:06.0/virtio4', sectors: 8192, major: 252, minor: 16, attrs: { serial: 'HOT\n' } });
    fs.writeFileSync(path.join(nodes, 'vdb'), xfsSuperblock({ uuid: EXT_UUID.replace('3f', '4f'), label: 'hot' }));
    source.push(formatUevent('add', devpath, { SUBSYSTEM: 'block', DEVNAME: 'vdb', DEVTYPE: 'disk', MAJOR: '252', MINOR: '16', SEQNUM: '100' }));
    await udevd!.settled();
    expect(await ids(DISK_TYPE)).toContain('vdb');
    expect(await spec<DiscoveredVolumeSpec>(DISCOVERED_VOLUME_TYPE, 'vdb')).toMatchObject({ name: 'xfs', label: 'hot' });
    expect(link('disk/by-label/hot')).toBe('../../vdb');
    expect(link('disk/by-path/pci-0000:00:06.0')).toBe('../../vdb');

    // Relabel vda2 and say so.
    fs.writeFileSync(path.join(nodes, 'vda2'), ext4Superblock({ uuid: EXT_UUID, label: 'RENAMED' }));
    source.push(formatUevent('change', `${paths.vda}/vda2`, { SUBSYSTEM: 'block', DEVNAME: 'vda2', DEVTYPE: 'partition' }));
    await udevd!.settled();
    expect(await spec<DiscoveredVolumeSpec>(DISCOVERED_VOLUME_TYPE, 'vda2')).toMatchObject({ label: 'RENAMED' });
    expect((await spec<BlockDeviceSpec>(BLOCK_DEVICE_TYPE, 'vda2')).generation).toBe(2);
    expect(link('disk/by-label/RENAMED')).toBe('../../vda2');
    expect(gone('disk/by-label/STATE')).toBe(true);

    removeFakeDisk(sys, devpath);
    source.push(formatUevent('remove', devpath, { SUBSYSTEM: 'block', DEVNAME: 'vdb', DEVTYPE: 'disk' }));
    await udevd!.settled();
    expect(await ids(DISK_TYPE)).not.toContain('vdb');
    expect(await ids(BLOCK_DEVICE_TYPE)).not.toContain('vdb');
    expect(await ids(DISCOVERED_VOLUME_TYPE)).not.toContain('vdb');
    expect(await ids(BLOCK_SYMLINK_TYPE)).not.toContain('vdb');
    expect(gone('disk/by-label/hot')).toBe(true);
    expect(gone('disk/by-path/pci-0000:00:06.0')).toBe(true);

    // Removing a disk removes its partitions, even when their own events are missing.
    removeFakeDisk(sys, paths.vda!);
    source.push(formatUevent('remove', paths.vda!, { SUBSYSTEM: 'block', DEVNAME: 'vda', DEVTYPE: 'disk' }));
    await udevd!.settled();
    expect((await ids(BLOCK_DEVICE_TYPE)).filter((i) => i.startsWith('vda'))).toEqual([]);
    expect(gone('disk/by-label/EFI')).toBe(true);
    expect(fs.readdirSync(path.join(dev, 'disk', 'by-partuuid'))).toEqual([]);
  });

  it('a duplicate label passes to the other device when the holder goes, and its resource says so', async () => {
    await start({ filter: (d) => d.name.startsWith('vdx') || d.name.startsWith('vdy') });
    const add = (name: string, minor: number) => {
      const devpath = addFakeDisk(sys, { name, at: `pci0000:00/0000:00:0${minor}.0/virtio${minor}`, sectors: 8192, major: 252, minor });
      fs.writeFileSync(path.join(nodes, name), xfsSuperblock({ uuid: `${minor}f2504e0-4f89-41d3-9a0c-0305e82c3301`, label: 'dup' }));
      source.push(formatUevent('add', devpath, { SUBSYSTEM: 'block', DEVNAME: name, DEVTYPE: 'disk' }));
      return devpath;
    };
    const x = add('vdx', 7);
    add('vdy', 8);
    await udevd!.settled();
    expect(link('disk/by-label/dup')).toBe('../../vdx');
    expect((await spec<BlockSymlinkSpec>(BLOCK_SYMLINK_TYPE, 'vdy')).paths).not.toContain(path.join(dev, 'disk/by-label/dup'));
    removeFakeDisk(sys, x);
    source.push(formatUevent('remove', x, { SUBSYSTEM: 'block', DEVNAME: 'vdx', DEVTYPE: 'disk' }));
    await udevd!.settled();
    expect(link('disk/by-label/dup')).toBe('../../vdy');
    expect((await spec<BlockSymlinkSpec>(BLOCK_SYMLINK_TYPE, 'vdy')).paths).toContain(path.join(dev, 'disk/by-label/dup'));
  });

  it('counts malformed, libudev and other-subsystem messages and drops them', async () => {
    await start();
    source.push(Buffer.from('garbage'));
    source.push(Buffer.from('add@/devices/x\0ACTION=add\0'));
    source.push(Buffer.concat([Buffer.from('libudev\0'), Buffer.alloc(32)]));
    source.push(formatUevent('add', '/devices/virtual/net/lo', { SUBSYSTEM: 'net', INTERFACE: 'lo' }));
    await udevd!.settled();
    expect(udevd!.stats).toEqual({ received: 4, malformed: 2, libudev: 1, ignored: 1, overflows: 0 });
  });

  it('trusts /sys over an event: a wrong devpath removes nothing, a strange DEVNAME is not followed', async () => {
    await start();
    source.push(formatUevent('remove', '/devices/virtual/block/vda', { SUBSYSTEM: 'block', DEVNAME: 'vda' }));
    source.push(formatUevent('change', '/devices/elsewhere/vda', { SUBSYSTEM: 'block', DEVNAME: 'vda' }));
    source.push(formatUevent('change', paths.vda!, { SUBSYSTEM: 'block', DEVNAME: '../../etc/passwd' }));
    await udevd!.settled();
    expect(await spec<DiscoveredVolumeSpec>(DISCOVERED_VOLUME_TYPE, 'vda')).toMatchObject({ dev_path: path.join(nodes, 'vda'), name: 'gpt' });
    expect(link('disk/by-id/virtio-BRONZE-DISK-1')).toBe('../../vda');
  });

  it('rescans /sys after an overflow', async () => {
    await start();
    removeFakeDisk(sys, paths.sdc!); // the removal event is "lost"
    source.overflow();
    await udevd!.settled();
    expect(await ids(DISK_TYPE)).not.toContain('sdc');
    expect(udevd!.stats.overflows).toBe(1);
  });

  it('admits only what the filter accepts, and partitions of admitted disks', async () => {
    await start({ filter: (d) => d.name === 'vda' });
    expect(await ids(BLOCK_DEVICE_TYPE)).toEqual(['vda', 'vda1', 'vda2']);
  });

  it('removes what an earlier run left: resources and links', async () => {
    await publisher.apply('runtime', DISK_TYPE, 'ghost', { size: 1 });
    fs.mkdirSync(path.join(dev, 'disk', 'by-uuid'), { recursive: true });
    fs.symlinkSync('../../ghost', path.join(dev, 'disk', 'by-uuid', 'ghost-uuid'));
    await start();
    expect(await ids(DISK_TYPE)).not.toContain('ghost');
    expect(gone('disk/by-uuid/ghost-uuid')).toBe(true);
    expect(link('disk/by-label/EFI')).toBe('../../vda1');
  });

  it('keeps publishing through a publisher that fails for a while', async () => {
    let failures = 2;
    const flaky: Publisher = {
      apply: async (...a) => {
        if (failures-- > 0) throw new Error('machined unavailable');
        return publisher.apply(...a);
      },
      destroy: (...a) => publisher.destroy(...a),
      list: (...a) => publisher.list(...a),
      watch: (...a) => publisher.watch(...a),
    };
    await start({ publisher: flaky, filter: (d) => d.name === 'vda' });
    expect(await ids(BLOCK_DEVICE_TYPE)).toEqual(['vda', 'vda1', 'vda2']);
    expect(logs.some((l) => l.includes('machined unavailable'))).toBe(true);
  });

  it('triggers coldplug by writing add to the uevent files', async () => {
    await start({ trigger: true, filter: (d) => d.name === 'sda' });
    expect(fs.readFileSync(path.join(sys, paths.sda!, 'uevent'), 'utf8')).toMatch(/^add [0-9a-f-]{36}$/);
    expect(fs.readFileSync(path.join(sys, paths.sdb!, 'uevent'), 'utf8')).toMatch(/^MAJOR=/);
  });
});

describe('an empty drive', () => {
  it('is recognised (ENOMEDIUM, which Node calls "Unknown system error -123"), so udevd does not warn about it', () => {
    expect(isNoMedium(Object.assign(new Error('Unknown system error -123: Unknown system error -123, open \'/dev/sr0\''), { errno: -123, code: 'Unknown system error -123' }))).toBe(true);
    expect(isNoMedium(Object.assign(new Error('ENOENT'), { errno: -2, code: 'ENOENT' }))).toBe(false);
    expect(isNoMedium(new Error('short read'))).toBe(false);
  });
});
