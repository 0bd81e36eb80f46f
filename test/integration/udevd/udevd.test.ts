// udevd against the real kernel: images made by the real tools (sgdisk, mkfs.*, gensquashfs,
// xorriso) attached to loop devices with partition scanning; udevd runs in this process on the
// kernel's uevent socket, reads /sys and the real device nodes, and writes its links under a
// temporary dev root. It admits only loop devices backed by this test's images, and triggers
// coldplug only for those. Every loop device is detached in afterAll, even after a failure.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatePublisher } from '../../../src/daemon/publisher.ts';
import type { Logger } from '../../../src/lib/log.ts';
import { initNative } from '../../../src/lib/native.ts';
import { MemoryState } from '../../../src/state/memory.ts';
import { BLOCK_DEVICE_TYPE } from '../../../src/contract/resources/block-device.ts';
import { BLOCK_SYMLINK_TYPE, type BlockSymlinkSpec } from '../../../src/contract/resources/block-symlink.ts';
import { DISCOVERED_VOLUME_TYPE, type DiscoveredVolumeSpec } from '../../../src/contract/resources/discovered-volume.ts';
import { DISK_TYPE, type DiskSpec } from '../../../src/contract/resources/disk.ts';
import { encodeLinkName } from '../../../src/udevd/links.ts';
import { requireTools } from '../../../src/disk/testing-images.ts';
import { type DeviceFilterInput, Udevd } from '../../../src/udevd/udevd.ts';

const MiB = 1 << 20;
const TOOLS = ['sgdisk', 'mkfs.xfs', 'mkfs.ext4', 'mkfs.vfat', 'gensquashfs', 'xorriso', 'blkid', 'losetup', 'partx'];

let tmp = '';
const attached: string[] = [];
const logs: string[] = [];
const log: Logger = { info: (m) => logs.push(`info ${m}`), warn: (m) => logs.push(`warn ${m}`), error: (m) => logs.push(`error ${m}`) };

function run(cmd: string, args: string[], env: Record<string, string> = {}): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')}: ${e.stderr || e.message}`);
  }
}

/** Copies src into dst at offset, skipping zero blocks so dst stays sparse. */
function embed(dst: string, src: string, offset: number): void {
  const data = fs.readFileSync(src);
  const fd = fs.openSync(dst, 'r+');
  try {
    const chunk = 64 * 1024;
    for (let o = 0; o < data.length; o += chunk) {
      const part = data.subarray(o, o + chunk);
      if (part.some((b) => b !== 0)) fs.writeSync(fd, part, 0, part.length, offset + o);
    }
  } finally {
    fs.closeSync(fd);
  }
}

function sparse(file: string, bytes: number): string {
  fs.writeFileSync(file, '');
  fs.truncateSync(file, bytes);
  return file;
}

/** Is this block device (or the disk of this partition) a loop device backed by one of our images? */
function ours(dev: DeviceFilterInput): boolean {
  const disk = dev.parent || dev.name;
  try {
    return fs.readFileSync(`/sys/block/${disk}/loop/backing_file`, 'utf8').trim().startsWith(tmp + '/');
  } catch {
    return false;
  }
}

function attach(image: string, partitions = false): string {
  const devnode = run('losetup', ['--find', '--show', '--partscan', image]).trim();
  attached.push(devnode);
  // Kernels built without the GPT parser (some hosts' are) scan nothing: partx adds the
  // partitions through BLKPG, and the kernel sends the same add events.
  if (partitions) run('partx', ['-u', devnode]);
  return path.basename(devnode);
}

function detach(name: string): void {
  run('losetup', ['-d', `/dev/${name}`]);
  const i = attached.indexOf(`/dev/${name}`);
  if (i >= 0) attached.splice(i, 1);
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logs.slice(-20).join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** udev's \xNN encoding undone. */
function udevDecode(s: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; ) {
    const m = /^\\x([0-9a-fA-F]{2})/.exec(s.slice(i, i + 4));
    if (m) {
      bytes.push(parseInt(m[1]!, 16));
      i += 4;
    } else {
      const ch = String.fromCodePoint(s.codePointAt(i)!);
      bytes.push(...Buffer.from(ch, 'utf8'));
      i += ch.length;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** What blkid (low-level probe) says, in its udev form: the *_ENC values are udev-encoded. */
function blkid(node: string): { raw: Record<string, string>; TYPE: string; UUID: string; LABEL: string; PTUUID: string; PART_ENTRY_NAME: string; PART_ENTRY_UUID: string; PART_ENTRY_TYPE: string } {
  let out: string;
  try {
    out = execFileSync('blkid', ['-p', '-o', 'udev', node], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    // Exit 2: no filesystem; a partition's entry is still reported when there is one.
    out = (err as { stdout?: string }).stdout ?? '';
  }
  const raw: Record<string, string> = {};
  for (const line of out.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) raw[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return {
    raw,
    TYPE: raw.ID_FS_TYPE ?? '',
    UUID: udevDecode(raw.ID_FS_UUID_ENC ?? ''),
    LABEL: udevDecode(raw.ID_FS_LABEL_ENC ?? ''),
    PTUUID: raw.ID_PART_TABLE_UUID ?? '',
    PART_ENTRY_NAME: udevDecode(raw.ID_PART_ENTRY_NAME ?? ''),
    PART_ENTRY_UUID: raw.ID_PART_ENTRY_UUID ?? '',
    PART_ENTRY_TYPE: raw.ID_PART_ENTRY_TYPE ?? '',
  };
}

const PARTS = [
  { n: 1, start: 2048, end: 18431, name: 'bronze ext4', code: '8300' },
  { n: 2, start: 18432, end: 92159, name: 'EFI System', code: 'ef00' },
  { n: 3, start: 92160, end: 100351, name: 'squash ü ✓', code: '8300' },
  { n: 4, start: 100352, end: 108543, name: 'nofs', code: '8300' },
];

let gptImage = '';
let xfsImage = '';
let isoImage = '';

beforeAll(() => {
  if (process.getuid?.() !== 0) throw new Error('the udevd integration test needs root (loop devices, the uevent socket)');
  requireTools(TOOLS);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'udevd-it-'));
  // A GPT disk with ext4, FAT32, squashfs and an empty partition.
  gptImage = sparse(path.join(tmp, 'gpt.img'), 64 * MiB);
  run('sgdisk', ['-U', 'R', ...PARTS.flatMap((p) => [`-n${p.n}:${p.start}:${p.end}`, `-t${p.n}:${p.code}`, `-c${p.n}:${p.name}`]), gptImage]);
  const ext4 = sparse(path.join(tmp, 'p1.img'), 8 * MiB);
  run('mkfs.ext4', ['-q', '-L', 'ext4 data', ext4]);
  const fat = sparse(path.join(tmp, 'p2.img'), 36 * MiB);
  run('mkfs.vfat', ['-F', '32', '-n', 'EFI', fat]);
  fs.mkdirSync(path.join(tmp, 'root'));
  fs.writeFileSync(path.join(tmp, 'root', 'hello'), 'bronze');
  const sq = path.join(tmp, 'p3.img');
  run('gensquashfs', ['-q', '-f', '-D', path.join(tmp, 'root'), sq]);
  for (const [file, part] of [
    [ext4, PARTS[0]!],
    [fat, PARTS[1]!],
    [sq, PARTS[2]!],
  ] as const) {
    embed(gptImage, file, part.start * 512);
    fs.rmSync(file);
  }
  // A whole-disk xfs and a whole-disk ISO with Joliet.
  xfsImage = sparse(path.join(tmp, 'xfs.img'), 32 * MiB);
  run('mkfs.xfs', ['-q', '-f', '-L', 'xfs_whole', xfsImage], { TEST_DIR: '1', TEST_DEV: '1', QA_CHECK_FS: '1' });
  isoImage = path.join(tmp, 'iso.img');
  run('xorriso', ['-as', 'mkisofs', '-quiet', '-J', '-V', 'Bronze Install Media', '-o', isoImage, path.join(tmp, 'root')]);
}, 60_000);

afterAll(() => {
  // Detach everything attached to our images, including what a failed test left.
  const images = [gptImage, xfsImage, isoImage].filter((f) => f && fs.existsSync(f));
  const nodes = new Set(attached);
  for (const img of images) {
    try {
      for (const line of execFileSync('losetup', ['-j', img], { encoding: 'utf8' }).split('\n')) {
        const node = line.split(':')[0];
        if (node) nodes.add(node);
      }
    } catch {
      /* losetup -j failing leaves only what we recorded */
    }
  }
  for (const node of nodes) {
    try {
      execFileSync('losetup', ['-d', node], { stdio: 'ignore' });
    } catch {
      /* already gone */
    }
  }
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}, 30_000);

describe('udevd on real loop devices', () => {
  let state: MemoryState;
  let udevd: Udevd | undefined;
  let devRoot: string;
  let disk = '';
  let xfsDisk = '';
  let isoDisk = '';

  const spec = async <S>(type: string, id: string): Promise<S | undefined> => {
    try {
      return (await state.get<S>('runtime', type, id)).spec;
    } catch {
      return undefined;
    }
  };
  const readlink = (l: string) => {
    try {
      return fs.readlinkSync(path.join(devRoot, 'disk', l));
    } catch {
      return undefined;
    }
  };

  afterAll(async () => {
    await udevd?.stop();
    console.log(logs.filter((l) => / ms$/.test(l)).join('\n'));
  });

  it('sees hot-added loop devices through uevents and matches blkid', async () => {
    await initNative();
    state = new MemoryState();
    devRoot = path.join(tmp, 'dev1');
    udevd = await Udevd.start({ publisher: new StatePublisher(state, 'udevd'), log, devRoot, filter: ours });
    await udevd.settled();
    expect(await state.list('runtime', BLOCK_DEVICE_TYPE)).toEqual([]); // nothing of ours yet

    const t0 = Date.now();
    disk = attach(gptImage, true);
    xfsDisk = attach(xfsImage);
    isoDisk = attach(isoImage);
    await waitFor('the four partitions', async () => {
      const dv = await spec<DiscoveredVolumeSpec>(DISCOVERED_VOLUME_TYPE, `${disk}p4`);
      return dv?.partition_label === 'nofs' && (await spec<DiscoveredVolumeSpec>(DISCOVERED_VOLUME_TYPE, `${disk}p1`))?.name === 'ext4';
    });
    await waitFor(
      'the xfs and iso disks',
      async () => (await spec<DiscoveredVolumeSpec>(DISCOVERED_VOLUME_TYPE, xfsDisk))?.name === 'xfs' && (await spec<DiscoveredVolumeSpec>(DISCOVERED_VOLUME_TYPE, isoDisk))?.name === 'iso9660',
    );
    await udevd.settled();
    log.info(`hot-add seen in ${Date.now() - t0} ms`);
    expect(udevd.stats.received).toBeGreaterThan(0);

    // The disk: its GPT and a Disk resource.
    const d = await spec<DiskSpec>(DISK_TYPE, disk);
    expect(d).toMatchObject({ dev_path: `/dev/${disk}`, size: 64 * MiB, readonly: false, bus_path: '/virtual', pretty_size: '67 MB' });
    expect(d?.transport).toBeUndefined();
    const wantDisk = blkid(`/dev/${disk}`);
    expect(await spec<DiscoveredVolumeSpec>(DISCOVERED_VOLUME_TYPE, disk)).toMatchObject({ type: 'disk', name: 'gpt', uuid: wantDisk.PTUUID });

    // Every partition and whole-disk filesystem as blkid sees it, and the links for it.
    for (const name of [...PARTS.map((p) => `${disk}p${p.n}`), xfsDisk, isoDisk]) {
      const want = blkid(`/dev/${name}`);
      const got = (await spec<DiscoveredVolumeSpec>(DISCOVERED_VOLUME_TYPE, name))!;
      expect({ name, fsType: got.name, uuid: got.uuid ?? '', label: got.label ?? '' }).toEqual({ name, fsType: want.TYPE, uuid: want.UUID, label: want.LABEL });
      // Link names encoded exactly as udev encodes them.
      if (got.label) expect(encodeLinkName(got.label)).toBe(want.raw.ID_FS_LABEL_ENC);
      if (got.uuid) expect(encodeLinkName(got.uuid)).toBe(want.raw.ID_FS_UUID_ENC);
      if (got.partition_label) expect(encodeLinkName(got.partition_label)).toBe(want.raw.ID_PART_ENTRY_NAME);
      if (got.type === 'partition') {
        expect({ name, partLabel: got.partition_label, partUuid: got.partition_uuid, partType: got.partition_type }).toEqual({
          name,
          partLabel: want.PART_ENTRY_NAME,
          partUuid: want.PART_ENTRY_UUID,
          partType: want.PART_ENTRY_TYPE,
        });
        expect(readlink(`by-partuuid/${got.partition_uuid}`)).toBe(`../../${name}`);
        expect(readlink(`by-partlabel/${encodeLinkName(got.partition_label!)}`)).toBe(`../../${name}`);
      }
      if (got.uuid) expect(readlink(`by-uuid/${encodeLinkName(got.uuid)}`)).toBe(`../../${name}`);
      if (got.label) expect(readlink(`by-label/${encodeLinkName(got.label)}`)).toBe(`../../${name}`);
      expect((await spec<BlockSymlinkSpec>(BLOCK_SYMLINK_TYPE, name))!.paths.length).toBeGreaterThan(0);
    }
    expect(readlink('by-label/ext4\\x20data')).toBe(`../../${disk}p1`);
    expect(readlink('by-label/EFI')).toBe(`../../${disk}p2`);
    expect(readlink('by-partlabel/squash\\x20ü\\x20✓')).toBe(`../../${disk}p3`);
    expect(readlink('by-label/xfs_whole')).toBe(`../../${xfsDisk}`);
    expect(readlink('by-label/Bronze\\x20Install\\x20Media')).toBe(`../../${isoDisk}`);
    expect(udevd.stats.malformed).toBe(0);
    expect(logs.filter((l) => l.startsWith('error'))).toEqual([]);
  });

  it('coldplugs what is already attached: from /sys, and by triggering our devices', async () => {
    await udevd!.stop();
    state = new MemoryState();
    devRoot = path.join(tmp, 'dev2');
    const t0 = Date.now();
    udevd = await Udevd.start({ publisher: new StatePublisher(state, 'udevd'), log, devRoot, filter: ours });
    await udevd.settled();
    log.info(`coldplug of ${udevd.devices().length} devices in ${Date.now() - t0} ms`);
    // Everything is there as soon as start() and settled() resolve: read from /sys, not waited for.
    expect((await state.list('runtime', BLOCK_DEVICE_TYPE)).map((r) => r.metadata.id).sort()).toEqual(
      [disk, ...PARTS.map((p) => `${disk}p${p.n}`), xfsDisk, isoDisk].sort(),
    );
    expect((await spec<DiscoveredVolumeSpec>(DISCOVERED_VOLUME_TYPE, `${disk}p2`))?.name).toBe('vfat');
    expect(readlink('by-label/xfs_whole')).toBe(`../../${xfsDisk}`);
    // The kernel echoes the trigger: one add per device, which udevd recognizes as its own.
    await waitFor('the echo of the coldplug trigger', () => udevd!.stats.received >= 7 && udevd!.stats.received);
  });

  it('removes links and resources when the loop devices are detached', async () => {
    for (const name of [disk, xfsDisk, isoDisk]) detach(name);
    await waitFor('the partitions to go', async () => (await state.list('runtime', BLOCK_DEVICE_TYPE)).every((r) => !r.metadata.id.startsWith(`${disk}p`)));
    await waitFor('the disks to go', async () => (await state.list('runtime', DISK_TYPE)).length === 0);
    await udevd!.settled();
    for (const dir of ['by-label', 'by-uuid', 'by-partlabel', 'by-partuuid']) {
      const full = path.join(devRoot, 'disk', dir);
      expect(fs.existsSync(full) ? fs.readdirSync(full) : []).toEqual([]);
    }
    // The loop devices themselves remain, empty.
    expect(await spec<DiscoveredVolumeSpec>(DISCOVERED_VOLUME_TYPE, disk)).toMatchObject({ size: 0, name: '' });
  });
});
