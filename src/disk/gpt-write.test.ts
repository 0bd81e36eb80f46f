import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { openReader } from './block-reader.ts';
import { readPartitionTable } from './gpt-read.ts';
import { buildGpt, guidToBytes, randomGuid, writeGpt } from './gpt-write.ts';
import { type DiskLayout, MiB, planLayout } from './layout.ts';
import { diskShSgdiskArgs, hasTool, run, sgdiskInfo, sgdiskPrint, sparseFile, tmpDir } from '../install/testing.ts';

const GiB = 1024 * MiB;
const DISK_GUID = '6d1f0a24-3b8e-4c5b-9a0e-2f7d3c1b5a49';
const PART_GUIDS = [1, 2, 3, 4, 5, 6].map((i) => `${String(i).repeat(8)}-aaaa-4bbb-8ccc-${String(i).repeat(12)}`);

const tmp = tmpDir('gpt');
afterAll(() => tmp.remove());
let imageCount = 0;

/** A sparse image of `bytes` bytes, GPT written to it; its path. */
function writtenImage(bytes: number, layout: DiskLayout, opts: Parameters<typeof writeGpt>[3] = {}, before?: (fd: number) => void): string {
  const file = path.join(tmp.dir, `disk${imageCount++}.raw`);
  sparseFile(file, bytes);
  const fd = fs.openSync(file, 'r+');
  try {
    before?.(fd);
    writeGpt(fd, bytes, layout, opts);
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

async function readTable(file: string, sectorSizes?: number[]) {
  const r = await openReader(file);
  try {
    return await readPartitionTable(r, sectorSizes);
  } finally {
    await r.close();
  }
}

describe('guidToBytes / randomGuid', () => {
  it('stores the first three fields little-endian', () => {
    expect(guidToBytes('c12a7328-f81f-11d2-ba4b-00a0c93ec93b').toString('hex')).toBe('28732ac11ff8d211ba4b00a0c93ec93b');
    expect(() => guidToBytes('not-a-guid')).toThrow(/not-a-guid/);
  });

  it('makes version 4 GUIDs from the random source', () => {
    expect(randomGuid(() => Buffer.alloc(16, 0xff))).toBe('ffffffff-ffff-4fff-bfff-ffffffffffff');
    expect(randomGuid(() => Buffer.alloc(16))).toBe('00000000-0000-4000-8000-000000000000');
    expect(randomGuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(() => randomGuid(() => Buffer.alloc(15))).toThrow(/15 bytes/);
  });
});

describe('buildGpt', () => {
  const layout = planLayout(2 * GiB);

  it('places the regions: MBR table at 446, primary from LBA 1, backup ending at the last sector', () => {
    const g = buildGpt(2 * GiB, layout, { diskGuid: DISK_GUID, partitionGuids: PART_GUIDS });
    expect(g.mbrTable.offset).toBe(446);
    expect(g.mbrTable.bytes).toHaveLength(66);
    expect(g.primary).toMatchObject({ offset: 512 });
    expect(g.primary.bytes).toHaveLength(512 + 16384);
    expect(g.backup.offset + g.backup.bytes.length).toBe(2 * GiB);
    expect(g.backup.offset).toBe((layout.lastUsableLba + 1) * 512);
    expect(g.diskGuid).toBe(DISK_GUID);
    expect(g.partitionGuids).toEqual(PART_GUIDS);
  });

  it('writes a protective MBR entry over the whole disk', () => {
    const t = buildGpt(2 * GiB, layout).mbrTable.bytes;
    expect(t[4]).toBe(0xee);
    expect(t.readUInt32LE(8)).toBe(1);
    expect(t.readUInt32LE(12)).toBe(4_194_303);
    expect(t.subarray(16, 64).every((b) => b === 0)).toBe(true);
    expect([t[64], t[65]]).toEqual([0x55, 0xaa]);
    // Past 2 TiB the size saturates and the CHS end is ff ff ff.
    const big = buildGpt(3 * 1024 * GiB, planLayout(3 * 1024 * GiB)).mbrTable.bytes;
    expect(big.readUInt32LE(12)).toBe(0xffff_ffff);
    expect([...big.subarray(5, 8)]).toEqual([0xff, 0xff, 0xff]);
  });

  it('checks both headers and the entry array with CRC32', () => {
    const g = buildGpt(2 * GiB, layout);
    const entries = g.primary.bytes.subarray(512, 512 + 16384);
    expect(g.backup.bytes.subarray(0, 16384)).toEqual(entries);
    for (const h of [g.primary.bytes.subarray(0, 512), g.backup.bytes.subarray(16384)]) {
      expect(h.subarray(0, 8).toString('latin1')).toBe('EFI PART');
      expect(h.readUInt32LE(88)).toBe(zlib.crc32(entries));
      const copy = Buffer.from(h.subarray(0, 92));
      copy.writeUInt32LE(0, 16);
      expect(h.readUInt32LE(16)).toBe(zlib.crc32(copy));
    }
  });

  it('makes random, distinct GUIDs by default', () => {
    const a = buildGpt(2 * GiB, layout);
    const b = buildGpt(2 * GiB, layout);
    const all = [a.diskGuid, ...a.partitionGuids, b.diskGuid, ...b.partitionGuids];
    expect(new Set(all).size).toBe(14);
  });

  it('refuses bad input with the reason', () => {
    expect(() => buildGpt(2 * GiB, layout, { random: () => Buffer.alloc(16) })).toThrow(/GUID 00000000-0000-4000-8000-000000000000 is used twice/);
    expect(() => buildGpt(2 * GiB, layout, { partitionGuids: PART_GUIDS.slice(1) })).toThrow('5 partition GUIDs given for 6 partitions');
    expect(() => buildGpt(2 * GiB, layout, { diskGuid: 'x' })).toThrow(/GUID x/);
    expect(() => buildGpt(3 * GiB, layout)).toThrow(/layout is for 4194304 sectors, the disk of 3221225472 bytes has 6291456/);
    const p = (over: Partial<DiskLayout['partitions'][number]>, i = 5): DiskLayout => ({
      ...layout,
      partitions: layout.partitions.map((x, j) => (j === i ? { ...x, ...over } : x)),
    });
    expect(() => buildGpt(2 * GiB, p({ lastLba: layout.lastUsableLba + 1 }))).toThrow(/partition 6 \(EPHEMERAL\): LBAs .* outside the usable/);
    expect(() => buildGpt(2 * GiB, p({ firstLba: 2_463_743 }))).toThrow('partition 6 (EPHEMERAL) overlaps partition 5 (STATE)');
    expect(() => buildGpt(2 * GiB, p({ number: 5 }))).toThrow(/number used twice/);
    expect(() => buildGpt(2 * GiB, p({ number: 129 }))).toThrow(/number out of 1..128/);
    expect(() => buildGpt(2 * GiB, p({ name: 'x'.repeat(37) as 'EFI' }))).toThrow(/name longer than 36/);
    expect(() => buildGpt(2 * GiB, { ...layout, lastUsableLba: layout.lastUsableLba + 1 })).toThrow(/overlap the GPT structures/);
  });
});

describe('writeGpt', () => {
  it('round-trips through udevd\'s GPT reader', async () => {
    const bytes = 3 * GiB + 12_345 * 512;
    const layout = planLayout(bytes);
    const file = writtenImage(bytes, layout, { diskGuid: DISK_GUID, partitionGuids: PART_GUIDS });
    const t = await readTable(file);
    expect(t).toMatchObject({ type: 'gpt', uuid: DISK_GUID, sectorSize: 512 });
    expect(t!.fromBackup).toBeUndefined();
    expect(t!.partitions).toEqual(
      layout.partitions.map((p, i) => ({
        number: p.number,
        type: p.typeGuid,
        uuid: PART_GUIDS[i],
        name: p.name,
        start: p.firstLba,
        size: p.sizeBytes / 512,
        attributes: '0',
      })),
    );
  });

  it('writes a backup the reader can use alone', async () => {
    const layout = planLayout(2 * GiB);
    const file = writtenImage(2 * GiB, layout);
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, Buffer.alloc(512), 0, 512, 512); // primary header gone
    fs.closeSync(fd);
    const t = await readTable(file);
    expect(t).toMatchObject({ type: 'gpt', fromBackup: true });
    expect(t!.partitions.map((p) => p.name)).toEqual(layout.partitions.map((p) => p.name));
  });

  it('round-trips with 4096-byte sectors', async () => {
    const layout = planLayout(2 * GiB, 4096);
    const t = await readTable(writtenImage(2 * GiB, layout), [4096]);
    expect(t).toMatchObject({ type: 'gpt', sectorSize: 4096 });
    expect(t!.partitions.map((p) => [p.name, p.start, p.size])).toEqual(
      layout.partitions.map((p) => [p.name, p.firstLba, p.sizeBytes / 4096]),
    );
  });

  it('keeps the MBR boot code (bytes 0..445) written before', () => {
    const code = Buffer.alloc(446);
    for (let i = 0; i < code.length; i++) code[i] = (i * 7 + 3) & 0xff;
    const file = writtenImage(2 * GiB, planLayout(2 * GiB), {}, (fd) => fs.writeSync(fd, code, 0, 446, 0));
    const sector0 = Buffer.alloc(512);
    const fd = fs.openSync(file, 'r');
    fs.readSync(fd, sector0, 0, 512, 0);
    fs.closeSync(fd);
    expect(sector0.subarray(0, 446)).toEqual(code);
    expect(sector0[446 + 4]).toBe(0xee);
    expect([sector0[510], sector0[511]]).toEqual([0x55, 0xaa]);
  });
});

const SGDISK = hasTool('sgdisk');
if (!SGDISK) console.warn('gpt-write.test.ts: sgdisk not installed, the checks with sgdisk are skipped');

describe.skipIf(!SGDISK)(`writeGpt checked by the host sgdisk${SGDISK ? '' : ': skipped, no sgdisk'}`, () => {
  for (const bytes of [2 * GiB, 3 * GiB + 12_345 * 512, 8 * GiB]) {
    it(`sgdisk -v finds no problems and -p/--info agree (${bytes} bytes)`, () => {
      const layout = planLayout(bytes);
      const file = writtenImage(bytes, layout, { diskGuid: DISK_GUID, partitionGuids: PART_GUIDS });
      expect(run('sgdisk', ['-v', file])).toMatch(/No problems found/);
      const p = sgdiskPrint(file);
      expect(p).toMatchObject({ sectors: layout.totalSectors, firstUsable: layout.firstUsableLba, lastUsable: layout.lastUsableLba, diskGuid: DISK_GUID });
      expect(p.partitions.map((x) => [x.number, x.first, x.last, x.name])).toEqual(layout.partitions.map((x) => [x.number, x.firstLba, x.lastLba, x.name]));
      layout.partitions.forEach((part, i) => {
        expect(sgdiskInfo(file, part.number)).toEqual({
          typeGuid: part.typeGuid,
          uniqueGuid: PART_GUIDS[i],
          first: part.firstLba,
          last: part.lastLba,
          sizeSectors: part.sizeBytes / 512,
          name: part.name,
        });
      });
    });
  }

  it('writes the same bytes as disk.sh\'s sgdisk command given the same GUIDs', () => {
    const bytes = 3 * GiB + 12_345 * 512;
    const layout = planLayout(bytes);
    const ours = writtenImage(bytes, layout, { diskGuid: DISK_GUID, partitionGuids: PART_GUIDS });
    const theirs = path.join(tmp.dir, 'sgdisk.raw');
    sparseFile(theirs, bytes);
    run('sgdisk', [
      ...diskShSgdiskArgs(),
      `--disk-guid=${DISK_GUID}`,
      ...PART_GUIDS.map((g, i) => `--partition-guid=${i + 1}:${g}`),
      theirs,
    ]);
    const g = buildGpt(bytes, layout, { diskGuid: DISK_GUID, partitionGuids: PART_GUIDS });
    for (const file of [ours, theirs]) {
      const fd = fs.openSync(file, 'r');
      try {
        for (const r of [g.mbrTable, g.primary, g.backup]) {
          const got = Buffer.alloc(r.bytes.length);
          fs.readSync(fd, got, 0, got.length, r.offset);
          expect(got.equals(r.bytes), `${path.basename(file)} at ${r.offset}`).toBe(true);
        }
      } finally {
        fs.closeSync(fd);
      }
    }
  });
});
