import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { bufferReader } from './block-reader.ts';
import { readPartitionTable } from './gpt-read.ts';
import { buildGpt } from './testing-images.ts';

const LINUX = '0fc63daf-8483-4772-8e79-3d69d8477de4';
const ESP = 'c12a7328-f81f-11d2-ba4b-00a0c93ec93b';
const DISK = '6d1f0a24-3b8e-4c5b-9a0e-2f7d3c1b5a49';

function flip(buf: Buffer, off: number, mask: number): void {
  buf[off] = buf[off]! ^ mask;
}

function sample(sectorSize = 512) {
  const sectors = sectorSize === 512 ? 8192 : 1024;
  return buildGpt({
    sectors,
    sectorSize,
    diskGuid: DISK,
    partitions: [
      { type: ESP, uuid: '11111111-2222-4333-8444-555555555555', name: 'EFI', first: 34 + (sectorSize === 512 ? 0 : 6), last: 2047 - (sectorSize === 512 ? 0 : 1500) },
      { type: LINUX, uuid: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', name: 'STATE ü ✓', first: 2048 - (sectorSize === 512 ? 0 : 1500), last: 4095 - (sectorSize === 512 ? 0 : 3100), slot: 3 },
    ],
  });
}

describe('readPartitionTable (GPT)', () => {
  it('reads the disk GUID and the entries, numbering by slot', async () => {
    const t = await readPartitionTable(bufferReader(sample()));
    expect(t).toMatchObject({ type: 'gpt', uuid: DISK, sectorSize: 512 });
    expect(t!.fromBackup).toBeUndefined();
    expect(t!.partitions).toEqual([
      { number: 1, type: ESP, uuid: '11111111-2222-4333-8444-555555555555', name: 'EFI', start: 34, size: 2014, attributes: '0' },
      { number: 4, type: LINUX, uuid: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', name: 'STATE ü ✓', start: 2048, size: 2048, attributes: '0' },
    ]);
  });

  it('reads a 4 KiB-sector GPT', async () => {
    const t = await readPartitionTable(bufferReader(sample(4096)), [4096]);
    expect(t).toMatchObject({ type: 'gpt', sectorSize: 4096 });
    expect(t!.partitions.map((p) => p.name)).toEqual(['EFI', 'STATE ü ✓']);
  });

  it('falls back to the backup header when the primary header CRC is wrong', async () => {
    const img = sample();
    flip(img, 512 + 60, 0xff); // inside the disk GUID: the header CRC no longer matches
    const t = await readPartitionTable(bufferReader(img));
    expect(t).toMatchObject({ type: 'gpt', uuid: DISK, fromBackup: true });
    expect(t!.partitions).toHaveLength(2);
  });

  it('falls back to the backup when the primary entry array CRC is wrong', async () => {
    const img = sample();
    flip(img, 1024 + 56, 0x01); // first entry's name
    const t = await readPartitionTable(bufferReader(img));
    expect(t).toMatchObject({ fromBackup: true });
    expect(t!.partitions[0]!.name).toBe('EFI');
  });

  it('finds nothing when both copies are damaged', async () => {
    const img = sample();
    flip(img, 512 + 60, 0xff);
    flip(img, img.length - 512 + 60, 0xff);
    expect(await readPartitionTable(bufferReader(img))).toBeUndefined();
  });

  it('needs the protective MBR', async () => {
    const img = sample();
    img[446 + 4] = 0x83;
    // Now it looks like a dos table with one Linux partition spanning the disk.
    expect((await readPartitionTable(bufferReader(img)))?.type).toBe('dos');
    img[510] = 0;
    expect(await readPartitionTable(bufferReader(img))).toBeUndefined();
  });

  it('rejects a header whose entry array would be huge', async () => {
    const img = sample();
    const h = img.subarray(512, 604);
    h.writeUInt32LE(1 << 20, 80); // entries
    h.writeUInt32LE(0, 16);
    h.writeUInt32LE(zlib.crc32(h), 16);
    flip(img, img.length - 512 + 60, 0xff);
    expect(await readPartitionTable(bufferReader(img))).toBeUndefined();
  });

  it('reads a truncated image without throwing', async () => {
    const img = sample();
    for (const n of [0, 100, 511, 512, 600, 1024, 1100, 17000]) {
      await expect(readPartitionTable(bufferReader(img.subarray(0, n)))).resolves.toBeUndefined();
    }
  });
});

describe('readPartitionTable (MBR)', () => {
  it('gives blkid-style partition UUIDs', async () => {
    const img = Buffer.alloc(64 * 512 * 100);
    img.writeUInt32LE(0x1234abcd, 440);
    const entry = (i: number, type: number, start: number, size: number) => {
      const o = 446 + i * 16;
      img[o] = i === 0 ? 0x80 : 0;
      img[o + 4] = type;
      img.writeUInt32LE(start, o + 8);
      img.writeUInt32LE(size, o + 12);
    };
    entry(0, 0x0c, 2048, 1000);
    entry(2, 0x83, 4096, 1000);
    img[510] = 0x55;
    img[511] = 0xaa;
    const t = await readPartitionTable(bufferReader(img));
    expect(t).toEqual({
      type: 'dos',
      uuid: '1234abcd',
      sectorSize: 512,
      partitions: [
        { number: 1, type: '0xc', uuid: '1234abcd-01', name: '', start: 2048, size: 1000 },
        { number: 3, type: '0x83', uuid: '1234abcd-03', name: '', start: 4096, size: 1000 },
      ],
    });
  });

  it('does not take a boot sector for a partition table', async () => {
    const img = Buffer.alloc(1 << 20);
    img.fill(0x90, 0, 446); // boot code
    img.fill(0x37, 446, 510); // garbage where entries would be
    img[510] = 0x55;
    img[511] = 0xaa;
    expect(await readPartitionTable(bufferReader(img))).toBeUndefined();
  });
});
