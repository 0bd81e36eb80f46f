// Writes a GUID partition table for a planned layout (layout.ts), as the installer lays out the
// node's disk. Written by hand, like the reader in src/disk/gpt-read.ts: no maintained JavaScript
// package writes GPT (the few on npm are abandoned or need a native build), and the format is
// small. What goes where, for a disk of N sectors of S bytes and E = 16 KiB / S entry sectors:
//
//   LBA 0, bytes 446..511  protective MBR: one partition of type 0xEE from LBA 1 over the disk
//                          (size min(N-1, 0xFFFFFFFF)), CHS as sgdisk computes them, 55 AA.
//                          Bytes 0..445 (GRUB's boot code, the disk signature) are left alone.
//   LBA 1                  primary header (92 bytes, the rest of the sector zero):
//                            0 "EFI PART"  8 revision 1.0  12 header size 92  16 header CRC32
//                           20 reserved 0  24 my LBA  32 alternate LBA  40 first usable LBA
//                           48 last usable LBA  56 disk GUID  72 entry array LBA
//                           80 entry count 128  84 entry size 128  88 entry array CRC32
//   LBA 2 .. 1+E           entry array: 128 entries of 128 bytes:
//                            0 type GUID  16 unique GUID  32 first LBA  40 last LBA (inclusive)
//                           48 attributes (0)  56 name, UTF-16LE, 36 code units, NUL-padded
//   LBA N-1-E .. N-2       backup entry array (the same bytes)
//   LBA N-1                backup header (my LBA and alternate LBA swapped, entries at N-1-E)
//
// GUIDs are stored mixed-endian: the first three fields little-endian, the last two as they read.
// CRC32s are zlib's (the IEEE polynomial GPT uses); a header's CRC covers its 92 bytes with the
// CRC field zeroed.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import zlib from 'node:zlib';
import { type DiskLayout, GPT_ENTRY_COUNT, GPT_ENTRY_SIZE, entryArraySectors } from './layout.ts';

export interface GptRegion {
  /** Byte offset on the disk. */
  offset: number;
  bytes: Buffer;
}

export interface GptImage {
  /** Bytes 446..511 of LBA 0: the protective MBR's partition table and its 55 AA signature. */
  mbrTable: GptRegion;
  /** From LBA 1: the primary header's sector, then the entry array. */
  primary: GptRegion;
  /** The backup entry array, then the backup header's sector (the disk's last sector). */
  backup: GptRegion;
  diskGuid: string;
  /** Unique partition GUIDs, in the order of layout.partitions. */
  partitionGuids: string[];
}

export interface GptOptions {
  /** Default: a random (v4) GUID. */
  diskGuid?: string;
  /** In the order of layout.partitions; default: random (v4) GUIDs. */
  partitionGuids?: readonly string[];
  /** Source of random bytes for the GUIDs not given (default crypto.randomBytes). */
  random?: (n: number) => Buffer;
}

const HEADER_SIZE = 92;
const NAME_UNITS = 36;
const GUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The bytes of a GPT for layout on a disk of diskBytes bytes; nothing is written. */
export function buildGpt(diskBytes: number, layout: DiskLayout, opts: GptOptions = {}): GptImage {
  checkLayout(diskBytes, layout);
  const ss = layout.sectorSize;
  const n = layout.totalSectors;
  const e = entryArraySectors(ss);
  const random = opts.random ?? randomBytes;
  const diskGuid = (opts.diskGuid ?? randomGuid(random)).toLowerCase();
  if (opts.partitionGuids && opts.partitionGuids.length !== layout.partitions.length) {
    throw new Error(`${opts.partitionGuids.length} partition GUIDs given for ${layout.partitions.length} partitions`);
  }
  const partitionGuids = layout.partitions.map((_, i) => (opts.partitionGuids?.[i] ?? randomGuid(random)).toLowerCase());
  const all = [diskGuid, ...partitionGuids];
  for (const g of all) if (!GUID_RE.test(g)) throw new Error(`GUID ${g} is not of the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`);
  const dup = all.find((g, i) => all.indexOf(g) !== i);
  if (dup) throw new Error(`GUID ${dup} is used twice`);

  const entries = Buffer.alloc(e * ss);
  layout.partitions.forEach((p, i) => {
    const o = (p.number - 1) * GPT_ENTRY_SIZE;
    guidToBytes(p.typeGuid).copy(entries, o);
    guidToBytes(partitionGuids[i]!).copy(entries, o + 16);
    entries.writeBigUInt64LE(BigInt(p.firstLba), o + 32);
    entries.writeBigUInt64LE(BigInt(p.lastLba), o + 40);
    entries.write(p.name, o + 56, NAME_UNITS * 2, 'utf16le');
  });
  const entriesCrc = zlib.crc32(entries.subarray(0, GPT_ENTRY_COUNT * GPT_ENTRY_SIZE));

  const header = (myLba: number, alternateLba: number, entriesLba: number): Buffer => {
    const h = Buffer.alloc(ss);
    h.write('EFI PART', 0, 'latin1');
    h.writeUInt32LE(0x0001_0000, 8);
    h.writeUInt32LE(HEADER_SIZE, 12);
    h.writeBigUInt64LE(BigInt(myLba), 24);
    h.writeBigUInt64LE(BigInt(alternateLba), 32);
    h.writeBigUInt64LE(BigInt(layout.firstUsableLba), 40);
    h.writeBigUInt64LE(BigInt(layout.lastUsableLba), 48);
    guidToBytes(diskGuid).copy(h, 56);
    h.writeBigUInt64LE(BigInt(entriesLba), 72);
    h.writeUInt32LE(GPT_ENTRY_COUNT, 80);
    h.writeUInt32LE(GPT_ENTRY_SIZE, 84);
    h.writeUInt32LE(entriesCrc, 88);
    h.writeUInt32LE(zlib.crc32(h.subarray(0, HEADER_SIZE)), 16);
    return h;
  };
  const backupEntriesLba = n - 1 - e;
  return {
    mbrTable: { offset: 446, bytes: protectiveMbrTable(n) },
    primary: { offset: ss, bytes: Buffer.concat([header(1, n - 1, 2), entries]) },
    backup: { offset: backupEntriesLba * ss, bytes: Buffer.concat([entries, header(n - 1, 1, backupEntriesLba)]) },
    diskGuid,
    partitionGuids,
  };
}

/**
 * Writes the GPT for layout to fd (a disk or an image opened for writing) with positional
 * writes, then fsyncs. Bytes 0..445 of the first sector are not touched. Returns what it wrote.
 */
export function writeGpt(fd: number, diskBytes: number, layout: DiskLayout, opts: GptOptions = {}): GptImage {
  const img = buildGpt(diskBytes, layout, opts);
  // The protective MBR last: until the tables are complete, the disk does not claim a new GPT.
  for (const r of [img.backup, img.primary, img.mbrTable]) writeAll(fd, r);
  fs.fsyncSync(fd);
  return img;
}

function writeAll(fd: number, r: GptRegion): void {
  let done = 0;
  while (done < r.bytes.length) done += fs.writeSync(fd, r.bytes, done, r.bytes.length - done, r.offset + done);
}

/** The 66 bytes from offset 446: one 0xEE entry, three empty ones, 55 AA. */
function protectiveMbrTable(totalSectors: number): Buffer {
  const t = Buffer.alloc(66);
  chs(1).copy(t, 1);
  t[4] = 0xee;
  chs(totalSectors - 1).copy(t, 5);
  t.writeUInt32LE(1, 8);
  t.writeUInt32LE(Math.min(totalSectors - 1, 0xffff_ffff), 12);
  t[64] = 0x55;
  t[65] = 0xaa;
  return t;
}

/** An LBA as MBR CHS bytes (head, sector | cylinder high bits, cylinder) with 255 heads and 63 sectors, as sgdisk does. */
function chs(lba: number): Buffer {
  const perCylinder = 255 * 63;
  const cylinder = Math.floor(lba / perCylinder);
  if (cylinder > 1023) return Buffer.from([0xff, 0xff, 0xff]);
  const head = Math.floor((lba % perCylinder) / 63);
  const sector = (lba % 63) + 1;
  return Buffer.from([head, sector | ((cylinder >> 8) << 6), cylinder & 0xff]);
}

/** A GUID string in the GPT's mixed-endian byte order. */
export function guidToBytes(guid: string): Buffer {
  if (!GUID_RE.test(guid)) throw new Error(`GUID ${guid} is not of the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`);
  const b = Buffer.from(guid.replace(/-/g, ''), 'hex');
  b.subarray(0, 4).reverse();
  b.subarray(4, 6).reverse();
  b.subarray(6, 8).reverse();
  return b;
}

/** A random (version 4, RFC 4122 variant) GUID. */
export function randomGuid(random: (n: number) => Buffer = randomBytes): string {
  const b = Buffer.from(random(16));
  if (b.length !== 16) throw new Error(`random source gave ${b.length} bytes, not 16`);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Rejects a layout the disk cannot hold or a GPT cannot describe. */
function checkLayout(diskBytes: number, l: DiskLayout): void {
  const ss = l.sectorSize;
  const e = entryArraySectors(ss);
  if (l.totalSectors !== Math.floor(diskBytes / ss)) {
    throw new Error(`layout is for ${l.totalSectors} sectors, the disk of ${diskBytes} bytes has ${Math.floor(diskBytes / ss)}`);
  }
  if (l.firstUsableLba < 2 + e || l.lastUsableLba > l.totalSectors - 2 - e || l.lastUsableLba < l.firstUsableLba) {
    throw new Error(`usable LBAs ${l.firstUsableLba}..${l.lastUsableLba} overlap the GPT structures of a ${l.totalSectors}-sector disk`);
  }
  const sorted = [...l.partitions].sort((a, b) => a.firstLba - b.firstLba);
  sorted.forEach((p, i) => {
    const what = `partition ${p.number} (${p.name})`;
    if (!Number.isInteger(p.number) || p.number < 1 || p.number > GPT_ENTRY_COUNT) throw new Error(`${what}: number out of 1..${GPT_ENTRY_COUNT}`);
    if (l.partitions.filter((q) => q.number === p.number).length > 1) throw new Error(`${what}: number used twice`);
    if (p.firstLba < l.firstUsableLba || p.lastLba > l.lastUsableLba || p.lastLba < p.firstLba) {
      throw new Error(`${what}: LBAs ${p.firstLba}..${p.lastLba} outside the usable ${l.firstUsableLba}..${l.lastUsableLba}`);
    }
    const prev = sorted[i - 1];
    if (prev && prev.lastLba >= p.firstLba) throw new Error(`${what} overlaps partition ${prev.number} (${prev.name})`);
    if (Buffer.byteLength(p.name, 'utf16le') > NAME_UNITS * 2) throw new Error(`${what}: name longer than ${NAME_UNITS} UTF-16 code units`);
    if (!GUID_RE.test(p.typeGuid)) throw new Error(`${what}: type ${p.typeGuid} is not a GUID`);
  });
}
