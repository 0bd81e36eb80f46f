import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bufferReader, openReader } from './block-reader.ts';
import { probeFilesystem } from './superblocks.ts';
import { ext4Superblock, fatImage, isoImage, parseBlkidExport, requireTools, squashfsSuperblock, xfsSuperblock } from './testing-images.ts';

const UUID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

describe('probeFilesystem on synthetic superblocks', () => {
  it('xfs', async () => {
    expect(await probeFilesystem(bufferReader(xfsSuperblock({ uuid: UUID, label: 'xfsdata' })))).toEqual({ type: 'xfs', uuid: UUID, label: 'xfsdata', version: '' });
  });

  it('ext4, ext3 and ext2 by their features', async () => {
    expect(await probeFilesystem(bufferReader(ext4Superblock({ uuid: UUID, label: 'EPHEMERAL' })))).toMatchObject({ type: 'ext4', uuid: UUID, label: 'EPHEMERAL' });
    expect(await probeFilesystem(bufferReader(ext4Superblock({ uuid: UUID, label: 'x', extents: false })))).toMatchObject({ type: 'ext3' });
    expect(await probeFilesystem(bufferReader(ext4Superblock({ uuid: UUID, label: 'x', extents: false, journal: false })))).toMatchObject({ type: 'ext2' });
  });

  it('squashfs', async () => {
    expect(await probeFilesystem(bufferReader(squashfsSuperblock()))).toEqual({ type: 'squashfs', uuid: '', label: '', version: '4.0' });
  });

  it('FAT16: the root directory label wins over the boot sector one', async () => {
    const img = fatImage({ fat32: false, serial: 0xdeadbeef, bootLabel: 'BOOTLBL', dirLabel: 'DIRLBL' });
    expect(await probeFilesystem(bufferReader(img))).toEqual({ type: 'vfat', uuid: 'DEAD-BEEF', label: 'DIRLBL', version: 'FAT16' });
  });

  it('FAT32: boot sector label when the root has none; NO NAME means none', async () => {
    expect(await probeFilesystem(bufferReader(fatImage({ fat32: true, serial: 0x01020304, bootLabel: 'EFI' })))).toEqual({
      type: 'vfat',
      uuid: '0102-0304',
      label: 'EFI',
      version: 'FAT32',
    });
    expect(await probeFilesystem(bufferReader(fatImage({ fat32: true, serial: 1 })))).toMatchObject({ label: '' });
    expect(await probeFilesystem(bufferReader(fatImage({ fat32: true, serial: 1, dirLabel: 'ROOTLBL' })))).toMatchObject({ label: 'ROOTLBL' });
  });

  it('iso9660: modification date as UUID, else creation; Joliet label merged', async () => {
    expect(await probeFilesystem(bufferReader(isoImage({ label: 'BRONZE_1_0' })))).toEqual({ type: 'iso9660', uuid: '2024-01-02-03-04-05-06', label: 'BRONZE_1_0', version: '' });
    expect(await probeFilesystem(bufferReader(isoImage({ label: 'X', modified: '2025123123595999' })))).toMatchObject({ uuid: '2025-12-31-23-59-59-99' });
    // Joliet holds 16 characters in their case; the primary descriptor 32 in upper case.
    expect(await probeFilesystem(bufferReader(isoImage({ label: 'BRONZE INSTALLER FOR AMD64', joliet: 'Bronze Installer' })))).toMatchObject({
      label: 'Bronze Installer FOR AMD64',
      version: 'Joliet Extension',
    });
    // When they disagree, Joliet's own.
    expect(await probeFilesystem(bufferReader(isoImage({ label: 'OTHER', joliet: 'Grüße' })))).toMatchObject({ label: 'Grüße' });
  });

  it('nothing on zeros, and nothing on a truncated device', async () => {
    expect(await probeFilesystem(bufferReader(Buffer.alloc(65536)))).toBeUndefined();
    expect(await probeFilesystem(bufferReader(Buffer.alloc(0)))).toBeUndefined();
    expect(await probeFilesystem(bufferReader(ext4Superblock({ uuid: UUID, label: 'x' }).subarray(0, 1100)))).toBeUndefined();
  });
});

// The same parsers against images the real tools make, checked against blkid.
describe('probeFilesystem matches blkid on images made by the real tools', () => {
  let dir: string;
  beforeAll(() => {
    requireTools(['mkfs.xfs', 'mkfs.ext4', 'mkfs.vfat', 'gensquashfs', 'xorriso', 'blkid']);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'udevd-fs-'));
  });
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const make = (name: string, sizeMiB: number, cmd: string, args: string[], env: Record<string, string> = {}) => {
    const file = path.join(dir, name);
    if (sizeMiB > 0) fs.writeFileSync(file, ''), fs.truncateSync(file, sizeMiB << 20);
    execFileSync(cmd, args.map((a) => (a === '@' ? file : a)), { stdio: 'pipe', env: { ...process.env, ...env } });
    return file;
  };

  const cases: Array<[string, () => string]> = [
    ['xfs', () => make('xfs.img', 32, 'mkfs.xfs', ['-q', '-f', '-L', 'xfs_lbl', '@'], { TEST_DIR: '1', TEST_DEV: '1', QA_CHECK_FS: '1' })],
    ['ext4', () => make('ext4.img', 8, 'mkfs.ext4', ['-q', '-L', 'ext4 label', '@'])],
    ['ext2', () => make('ext2.img', 4, 'mkfs.ext4', ['-q', '-O', '^has_journal,^extent,^64bit,^flex_bg,^metadata_csum,^huge_file,^dir_nlink,^extra_isize', '-L', 'old', '@'])],
    ['FAT12', () => make('fat12.img', 2, 'mkfs.vfat', ['-n', 'SMALL', '@'])],
    ['FAT16', () => make('fat16.img', 16, 'mkfs.vfat', ['-F', '16', '-n', 'FAT 16', '@'])],
    ['FAT32', () => make('fat32.img', 40, 'mkfs.vfat', ['-F', '32', '-n', 'EFI', '@'])],
    ['FAT32 without a label', () => make('fat32n.img', 40, 'mkfs.vfat', ['-F', '32', '@'])],
    [
      'squashfs',
      () => {
        fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
        fs.writeFileSync(path.join(dir, 'src', 'a'), 'hello');
        return make('sq.img', 0, 'gensquashfs', ['-q', '-f', '-D', path.join(dir, 'src'), '@']);
      },
    ],
    ['iso9660', () => make('iso.img', 0, 'xorriso', ['-as', 'mkisofs', '-quiet', '-V', 'BRONZE_ISO', '-o', '@', path.join(dir, 'src')])],
    ['iso9660 + Joliet', () => make('isoj.img', 0, 'xorriso', ['-as', 'mkisofs', '-quiet', '-J', '-V', 'Bronze Installer amd64', '-o', '@', path.join(dir, 'src')])],
  ];

  for (const [name, build] of cases) {
    it(name, async () => {
      const file = build();
      const want = parseBlkidExport(execFileSync('blkid', ['-p', '-o', 'export', file], { encoding: 'utf8' }));
      const r = await openReader(file);
      try {
        const got = await probeFilesystem(r);
        expect(got).toBeDefined();
        expect({ type: got!.type, uuid: got!.uuid, label: got!.label }).toEqual({ type: want.TYPE, uuid: want.UUID ?? '', label: want.LABEL ?? '' });
        if (want.VERSION && got!.type !== 'xfs') expect(got!.version).toBe(want.VERSION);
      } finally {
        await r.close();
      }
    });
  }
});
