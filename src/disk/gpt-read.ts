// Partition tables, read by hand: GPT (protective MBR, header at LBA 1 with its CRC32, the
// partition entry array with its CRC32, the backup header at the last LBA when the primary is
// damaged) and, for the partition UUIDs blkid gives them, plain MBR ("dos") tables.
//
// Written here rather than taken from a library: no maintained JavaScript package reads GPT
// (the few on npm are abandoned or need a native build), and the format is small.
import zlib from 'node:zlib';
import { type Reader, guidLE, isZero, u64le, utf16 } from './block-reader.ts';

export interface PartitionEntry {
  /** 1-based, as the kernel numbers partitions (the slot in the GPT entry array + 1). */
  number: number;
  /** GPT: the partition type GUID (lowercase); MBR: the type byte as '0x83'. */
  type: string;
  /** GPT: the unique partition GUID; MBR: '<disk signature>-<nn>' as blkid gives it. */
  uuid: string;
  /** GPT partition name (UTF-16LE in the entry); '' for MBR. */
  name: string;
  /** In sectors of the table's sector size. */
  start: number;
  size: number;
  /** GPT attribute bits as a decimal string (a u64). */
  attributes?: string;
}

export interface PartitionTable {
  type: 'gpt' | 'dos';
  /** GPT disk GUID; MBR disk signature as 8 hex digits. */
  uuid: string;
  sectorSize: number;
  /** The backup GPT header had to be used (the primary is damaged). */
  fromBackup?: boolean;
  partitions: PartitionEntry[];
}

const GPT_SIGNATURE = 'EFI PART';
/** Upper bound for the entry array (the spec's minimum is 16 KiB; real tables never approach this). */
const MAX_ENTRY_ARRAY = 1 << 20;

/** Reads the GPT (or else MBR) of a disk; undefined when it has none or it is invalid. */
export async function readPartitionTable(r: Reader, sectorSizes: number[] = [512, 4096]): Promise<PartitionTable | undefined> {
  const mbr = await r.read(0, 512);
  if (mbr.length < 512 || mbr[510] !== 0x55 || mbr[511] !== 0xaa) return undefined;
  const entries = mbrEntries(mbr);
  if (entries.some((e) => e.type === 0xee)) {
    for (const ss of sectorSizes) {
      const gpt = await readGpt(r, ss);
      if (gpt) return gpt;
    }
    return undefined; // protective MBR without a valid GPT: not a dos table either
  }
  return readMbr(mbr, entries, r.size);
}

interface MbrEntry {
  status: number;
  type: number;
  start: number;
  size: number;
}

function mbrEntries(mbr: Buffer): MbrEntry[] {
  const out: MbrEntry[] = [];
  for (let i = 0; i < 4; i++) {
    const o = 446 + i * 16;
    out.push({ status: mbr[o]!, type: mbr[o + 4]!, start: mbr.readUInt32LE(o + 8), size: mbr.readUInt32LE(o + 12) });
  }
  return out;
}

async function readGpt(r: Reader, ss: number): Promise<PartitionTable | undefined> {
  const primary = await readHeader(r, 1, ss);
  if (primary) return primary;
  // The primary is damaged: the backup is at the last LBA (the primary's pointer to it cannot be trusted).
  const lastLba = Math.floor(r.size / ss) - 1;
  if (lastLba <= 1) return undefined;
  const backup = await readHeader(r, lastLba, ss);
  return backup && { ...backup, fromBackup: true };
}

async function readHeader(r: Reader, lba: number, ss: number): Promise<PartitionTable | undefined> {
  const hdr = await r.read(lba * ss, ss);
  if (hdr.length < 92 || hdr.subarray(0, 8).toString('latin1') !== GPT_SIGNATURE) return undefined;
  const headerSize = hdr.readUInt32LE(12);
  if (headerSize < 92 || headerSize > ss || headerSize > hdr.length) return undefined;
  const crc = hdr.readUInt32LE(16);
  const copy = Buffer.from(hdr.subarray(0, headerSize));
  copy.writeUInt32LE(0, 16);
  if (zlib.crc32(copy) !== crc) return undefined;
  const myLba = u64le(hdr, 24);
  if (myLba !== lba) return undefined;
  const firstUsable = u64le(hdr, 40);
  const lastUsable = u64le(hdr, 48);
  const entriesLba = u64le(hdr, 72);
  const count = hdr.readUInt32LE(80);
  const entrySize = hdr.readUInt32LE(84);
  const entriesCrc = hdr.readUInt32LE(88);
  if (firstUsable === undefined || lastUsable === undefined || entriesLba === undefined) return undefined;
  if (lastUsable < firstUsable) return undefined;
  if (entrySize < 128 || entrySize % 8 !== 0 || count === 0) return undefined;
  const arrayBytes = count * entrySize;
  if (arrayBytes > MAX_ENTRY_ARRAY) return undefined;
  if (entriesLba * ss + arrayBytes > r.size) return undefined;
  const arr = await r.read(entriesLba * ss, arrayBytes);
  if (arr.length !== arrayBytes || zlib.crc32(arr) !== entriesCrc) return undefined;

  const partitions: PartitionEntry[] = [];
  for (let i = 0; i < count; i++) {
    const e = arr.subarray(i * entrySize, i * entrySize + 128);
    if (isZero(e.subarray(0, 16))) continue; // unused slot
    const first = u64le(e, 32);
    const last = u64le(e, 40);
    if (first === undefined || last === undefined || last < first) continue;
    partitions.push({
      number: i + 1,
      type: guidLE(e, 0),
      uuid: guidLE(e, 16),
      name: utf16(e.subarray(56, 128), false),
      start: first,
      size: last - first + 1,
      attributes: e.readBigUInt64LE(48).toString(),
    });
  }
  return { type: 'gpt', uuid: guidLE(hdr, 56), sectorSize: ss, partitions };
}

/** A classic MBR: primary partitions only (the kernel's numbers 1-4); logical ones are not read. */
function readMbr(mbr: Buffer, entries: MbrEntry[], size: number): PartitionTable | undefined {
  // A FAT or NTFS boot sector also ends in 55 aa: an MBR's status bytes are 0x00 or 0x80 and
  // its used entries lie inside the disk.
  const used = entries.map((e, i) => ({ ...e, number: i + 1 })).filter((e) => e.type !== 0 && e.size > 0);
  if (entries.some((e) => e.status !== 0 && e.status !== 0x80)) return undefined;
  if (used.length === 0) return undefined;
  const sectors = Math.floor(size / 512);
  if (used.some((e) => e.start === 0 || e.start + e.size > sectors)) return undefined;
  const sig = mbr.readUInt32LE(440).toString(16).padStart(8, '0');
  return {
    type: 'dos',
    uuid: sig,
    sectorSize: 512,
    partitions: used.map((e) => ({
      number: e.number,
      type: `0x${e.type.toString(16)}`,
      uuid: `${sig}-${e.number.toString(16).padStart(2, '0')}`,
      name: '',
      start: e.start,
      size: e.size,
    })),
  };
}
