import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VOLUME_LABELS } from '../machined/volumes.ts';
import {
  BIOS_BOOT_FIRST_LBA,
  BIOS_BOOT_OFFSET_BYTES,
  BOOT_FIRST_LBA,
  EFI_FIRST_LBA,
  EPHEMERAL_FIRST_LBA,
  META_FIRST_LBA,
  MIN_DISK_BYTES,
  MIN_EPHEMERAL_BYTES,
  MiB,
  PARTITION_TYPES,
  STATE_FIRST_LBA,
  minDiskBytes,
  partitionByName,
  planLayout,
} from './layout.ts';
import { diskShSgdiskArgs, hasTool, run, sgdiskInfo, sgdiskPrint, sparseFile, tmpDir } from '../install/testing.ts';

const GiB = 1024 * MiB;

describe('planLayout', () => {
  it('lays out a 2 GiB disk as disk.sh does', () => {
    const l = planLayout(2 * GiB);
    expect(l).toMatchObject({ sectorSize: 512, totalSectors: 4_194_304, firstUsableLba: 34, lastUsableLba: 4_194_270 });
    expect(l.partitions.map((p) => [p.number, p.name, p.firstLba, p.lastLba])).toEqual([
      [1, 'EFI', 2048, 526_335],
      [2, 'BIOS', 526_336, 528_383],
      [3, 'BOOT', 528_384, 2_256_895],
      [4, 'META', 2_256_896, 2_258_943],
      [5, 'STATE', 2_258_944, 2_463_743],
      [6, 'EPHEMERAL', 2_463_744, 4_194_270],
    ]);
    expect(l.partitions.map((p) => p.typeGuid)).toEqual([
      PARTITION_TYPES.efiSystem,
      PARTITION_TYPES.biosBoot,
      ...Array(4).fill(PARTITION_TYPES.linuxFilesystem),
    ]);
    for (const p of l.partitions) {
      expect(p.offsetBytes).toBe(p.firstLba * 512);
      expect(p.sizeBytes).toBe((p.lastLba - p.firstLba + 1) * 512);
    }
    expect(partitionByName(l, 'META').sizeBytes).toBe(MiB);
  });

  it('names the partitions as machined looks for them', () => {
    expect(planLayout(2 * GiB).partitions.map((p) => p.name)).toEqual([...VOLUME_LABELS]);
  });

  it('keeps every partition but EPHEMERAL at the same place on any disk', () => {
    const fixed = (bytes: number) => planLayout(bytes).partitions.slice(0, 5);
    expect(fixed(MIN_DISK_BYTES)).toEqual(fixed(2 * GiB));
    expect(fixed(2 * GiB)).toEqual(fixed(4096 * GiB));
    const firsts = planLayout(2 * GiB).partitions.map((p) => p.firstLba);
    expect(firsts).toEqual([EFI_FIRST_LBA, BIOS_BOOT_FIRST_LBA, BOOT_FIRST_LBA, META_FIRST_LBA, STATE_FIRST_LBA, EPHEMERAL_FIRST_LBA]);
    expect(BIOS_BOOT_FIRST_LBA * 512).toBe(BIOS_BOOT_OFFSET_BYTES);
    // All aligned to 1 MiB; EPHEMERAL's end is the last usable LBA, unaligned.
    for (const p of planLayout(2 * GiB).partitions.slice(0, 5)) {
      expect(p.offsetBytes % MiB).toBe(0);
      expect(p.sizeBytes % MiB).toBe(0);
    }
  });

  it('gives EPHEMERAL the rest, up to the last usable LBA, ignoring a partial last sector', () => {
    const l = planLayout(3 * GiB + 12_345 * 512 + 511);
    expect(l.totalSectors).toBe(6_291_456 + 12_345);
    expect(l.lastUsableLba).toBe(l.totalSectors - 34);
    expect(partitionByName(l, 'EPHEMERAL')).toMatchObject({ firstLba: EPHEMERAL_FIRST_LBA, lastLba: l.lastUsableLba });
  });

  it('handles 4096-byte sectors (entry array of 4 sectors, same byte offsets)', () => {
    const l = planLayout(2 * GiB, 4096);
    expect(l).toMatchObject({ totalSectors: 524_288, firstUsableLba: 6, lastUsableLba: 524_288 - 6 });
    expect(l.partitions.map((p) => p.offsetBytes)).toEqual(planLayout(2 * GiB).partitions.map((p) => p.offsetBytes));
    expect(partitionByName(l, 'BIOS')).toMatchObject({ firstLba: BIOS_BOOT_OFFSET_BYTES / 4096, sizeBytes: MiB });
    expect(() => planLayout(2 * GiB, 520)).toThrow(/sector size 520/);
  });

  it('computes the least disk size: EPHEMERAL gets exactly MIN_EPHEMERAL_BYTES', () => {
    expect(MIN_DISK_BYTES).toBe(1_576_026_624);
    expect(partitionByName(planLayout(MIN_DISK_BYTES), 'EPHEMERAL').sizeBytes).toBe(MIN_EPHEMERAL_BYTES);
    expect(partitionByName(planLayout(minDiskBytes(4096), 4096), 'EPHEMERAL').sizeBytes).toBe(MIN_EPHEMERAL_BYTES);
    expect(() => planLayout(minDiskBytes(4096) - 1, 4096)).toThrow(/too small/);
  });

  it('refuses a disk that is too small, naming its size and the least one', () => {
    expect(() => planLayout(MIN_DISK_BYTES - 1)).toThrow(
      `disk of 1576026623 bytes (1503.0 MiB) is too small: the layout needs at least 1576026624 bytes (1503.0 MiB) with 512-byte sectors, for EPHEMERAL to get 300 MiB`,
    );
    expect(() => planLayout(0)).toThrow(/disk of 0 bytes/);
    expect(() => planLayout(-1)).toThrow(/not a byte count/);
    expect(() => planLayout(1.5 * GiB + 0.5)).toThrow(/not a byte count/);
  });
});

const SGDISK = hasTool('sgdisk');
if (!SGDISK) console.warn('layout.test.ts: sgdisk not installed, the comparison with sgdisk is skipped');

describe.skipIf(!SGDISK)(`planLayout against the host sgdisk (disk.sh command)${SGDISK ? '' : ': skipped, no sgdisk'}`, () => {
  const tmp = tmpDir('layout');
  afterAll(() => tmp.remove());

  it('reads the sgdisk command from disk.sh', () => {
    const args = diskShSgdiskArgs();
    expect(args[0]).toBe('--clear');
    expect(args).toContain('--new=6:0:0');
    expect(args).toContain('--change-name=6:EPHEMERAL');
  });

  const sizes: [string, number][] = [
    ['2 GiB', 2 * GiB],
    ['3 GiB + 12345 sectors', 3 * GiB + 12_345 * 512],
    ['8 GiB', 8 * GiB],
    ['the least size', MIN_DISK_BYTES],
    ['an odd sector count', MIN_DISK_BYTES + 7 * 512],
  ];
  for (const [label, bytes] of sizes) {
    it(`matches sgdisk on ${label}`, () => {
      const img = path.join(tmp.dir, 'disk.raw');
      sparseFile(img, bytes);
      run('sgdisk', [...diskShSgdiskArgs(), img]);
      const l = planLayout(bytes);
      const p = sgdiskPrint(img);
      expect({ sectors: p.sectors, firstUsable: p.firstUsable, lastUsable: p.lastUsable }).toEqual({
        sectors: l.totalSectors,
        firstUsable: l.firstUsableLba,
        lastUsable: l.lastUsableLba,
      });
      expect(p.partitions.map((x) => [x.number, x.first, x.last, x.name])).toEqual(
        l.partitions.map((x) => [x.number, x.firstLba, x.lastLba, x.name]),
      );
      for (const part of l.partitions) {
        const info = sgdiskInfo(img, part.number);
        expect(info).toMatchObject({
          typeGuid: part.typeGuid,
          first: part.firstLba,
          last: part.lastLba,
          sizeSectors: part.sizeBytes / 512,
          name: part.name,
        });
      }
    });
  }
});
