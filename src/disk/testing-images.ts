// Synthetic disk images for the parser tests and the fuzz test: a GPT (protective MBR, both
// headers, entry arrays with their CRCs) and minimal superblocks of each filesystem udevd
// reads. Only the fields the parsers look at are filled in.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

/** A GUID string as EFI stores it (first three fields little-endian). */
export function guidBytes(guid: string): Buffer {
  const h = guid.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(h)) throw new Error(`bad guid ${guid}`);
  const b = Buffer.from(h, 'hex');
  const out = Buffer.from(b);
  out[0] = b[3]!;
  out[1] = b[2]!;
  out[2] = b[1]!;
  out[3] = b[0]!;
  out[4] = b[5]!;
  out[5] = b[4]!;
  out[6] = b[7]!;
  out[7] = b[6]!;
  return out;
}

export interface GptPartitionSpec {
  type: string;
  uuid: string;
  name: string;
  first: number;
  last: number;
  /** Slot in the entry array (0-based); default: its index in the list. */
  slot?: number;
}

export interface GptSpec {
  /** Total sectors. */
  sectors: number;
  sectorSize?: number;
  diskGuid: string;
  partitions: GptPartitionSpec[];
  entries?: number;
  entrySize?: number;
}

export function buildGpt(spec: GptSpec): Buffer {
  const ss = spec.sectorSize ?? 512;
  const count = spec.entries ?? 128;
  const esz = spec.entrySize ?? 128;
  const img = Buffer.alloc(spec.sectors * ss);
  // Protective MBR: one partition of type 0xee covering the disk.
  const pe = 446;
  img[pe + 4] = 0xee;
  img.writeUInt32LE(1, pe + 8);
  img.writeUInt32LE(Math.min(spec.sectors - 1, 0xffffffff), pe + 12);
  img[510] = 0x55;
  img[511] = 0xaa;
  const arr = Buffer.alloc(count * esz);
  spec.partitions.forEach((p, i) => {
    const o = (p.slot ?? i) * esz;
    guidBytes(p.type).copy(arr, o);
    guidBytes(p.uuid).copy(arr, o + 16);
    arr.writeBigUInt64LE(BigInt(p.first), o + 32);
    arr.writeBigUInt64LE(BigInt(p.last), o + 40);
    Buffer.from(p.name, 'utf16le').subarray(0, 72).copy(arr, o + 56);
  });
  const arrSectors = Math.ceil(arr.length / ss);
  const lastLba = spec.sectors - 1;
  const write = (lba: number, alt: number, entriesLba: number) => {
    const h = Buffer.alloc(92);
    h.write('EFI PART', 0, 'latin1');
    h.writeUInt32LE(0x00010000, 8);
    h.writeUInt32LE(92, 12);
    h.writeBigUInt64LE(BigInt(lba), 24);
    h.writeBigUInt64LE(BigInt(alt), 32);
    h.writeBigUInt64LE(BigInt(2 + arrSectors), 40);
    h.writeBigUInt64LE(BigInt(lastLba - 1 - arrSectors), 48);
    guidBytes(spec.diskGuid).copy(h, 56);
    h.writeBigUInt64LE(BigInt(entriesLba), 72);
    h.writeUInt32LE(count, 80);
    h.writeUInt32LE(esz, 84);
    h.writeUInt32LE(zlib.crc32(arr), 88);
    h.writeUInt32LE(zlib.crc32(h), 16);
    h.copy(img, lba * ss);
    arr.copy(img, entriesLba * ss);
  };
  write(1, lastLba, 2);
  write(lastLba, 1, lastLba - arrSectors);
  return img;
}

export function ext4Superblock(opts: { uuid: string; label: string; journal?: boolean; extents?: boolean }): Buffer {
  const img = Buffer.alloc(4096);
  const sb = img.subarray(1024, 2048);
  sb.writeUInt32LE(2, 0x18); // log block size: 4096
  sb.writeUInt16LE(0xef53, 0x38);
  sb.writeUInt32LE(1, 0x4c); // rev level
  sb.writeUInt32LE(opts.journal ?? true ? 0x4 : 0, 0x5c);
  sb.writeUInt32LE((opts.extents ?? true ? 0x40 : 0) | 0x2, 0x60);
  Buffer.from(opts.uuid.replace(/-/g, ''), 'hex').copy(sb, 0x68);
  Buffer.from(opts.label, 'utf8').subarray(0, 16).copy(sb, 0x78);
  return img;
}

export function xfsSuperblock(opts: { uuid: string; label: string }): Buffer {
  const sb = Buffer.alloc(4096);
  sb.write('XFSB', 0, 'latin1');
  sb.writeUInt32BE(4096, 4);
  sb.writeBigUInt64BE(65536n, 8);
  Buffer.from(opts.uuid.replace(/-/g, ''), 'hex').copy(sb, 32);
  sb.writeUInt32BE(16384, 84);
  sb.writeUInt32BE(4, 88);
  sb.writeUInt16BE(512, 102);
  sb.writeUInt16BE(512, 104);
  Buffer.from(opts.label, 'utf8').subarray(0, 12).copy(sb, 108);
  return sb;
}

export function squashfsSuperblock(): Buffer {
  const sb = Buffer.alloc(4096);
  sb.write('hsqs', 0, 'latin1');
  sb.writeUInt16LE(4, 28);
  sb.writeUInt16LE(0, 30);
  return sb;
}

/** A FAT16 volume of 8 MiB (16384 sectors, 2 per cluster) or a FAT32 one of 64 MiB. */
export function fatImage(opts: { fat32: boolean; serial: number; bootLabel?: string; dirLabel?: string }): Buffer {
  const ss = 512;
  const fat32 = opts.fat32;
  const sectors = fat32 ? 131072 : 16384;
  const img = Buffer.alloc(sectors * ss);
  const reserved = fat32 ? 32 : 4;
  const spc = fat32 ? 1 : 2;
  const fatLen = fat32 ? 1009 : 32;
  const dirEntries = fat32 ? 0 : 512;
  img[0] = 0xeb;
  img[1] = 0x3c;
  img[2] = 0x90;
  img.write('mkfs.fat', 3, 'latin1');
  img.writeUInt16LE(ss, 11);
  img[13] = spc;
  img.writeUInt16LE(reserved, 14);
  img[16] = 2;
  img.writeUInt16LE(dirEntries, 17);
  img.writeUInt16LE(fat32 ? 0 : sectors, 19);
  img[21] = 0xf8;
  img.writeUInt16LE(fat32 ? 0 : fatLen, 22);
  img.writeUInt32LE(fat32 ? sectors : 0, 32);
  const ext = fat32 ? 0x42 : 0x26;
  if (fat32) {
    img.writeUInt32LE(fatLen, 36);
    img.writeUInt32LE(2, 44); // root cluster
  }
  img[ext] = 0x29;
  img.writeUInt32LE(opts.serial >>> 0, ext + 1);
  img.write((opts.bootLabel ?? 'NO NAME').padEnd(11, ' '), ext + 5, 'latin1');
  img.write(fat32 ? 'FAT32   ' : 'FAT16   ', ext + 16, 'latin1');
  img[510] = 0x55;
  img[511] = 0xaa;
  const rootDir = (reserved + 2 * fatLen) * ss; // FAT16's fixed root, or FAT32's cluster 2
  if (fat32) {
    // FAT entries 0..2: media, end-of-chain, root directory ends in one cluster.
    const fat = reserved * ss;
    img.writeUInt32LE(0x0ffffff8, fat);
    img.writeUInt32LE(0x0fffffff, fat + 4);
    img.writeUInt32LE(0x0fffffff, fat + 8);
  }
  if (opts.dirLabel !== undefined) {
    img.write(opts.dirLabel.padEnd(11, ' '), rootDir, 'latin1');
    img[rootDir + 11] = 0x08;
  }
  return img;
}

function isoField(s: string, len: number): string {
  return s.padEnd(len, ' ').slice(0, len);
}

/** An ISO 9660 image with a primary descriptor and, optionally, a Joliet one. */
export function isoImage(opts: { label: string; joliet?: string; modified?: string; created?: string }): Buffer {
  const img = Buffer.alloc(0x8000 + 4 * 2048);
  const pvd = img.subarray(0x8000, 0x8800);
  pvd[0] = 1;
  pvd.write('CD001', 1, 'latin1');
  pvd[6] = 1;
  pvd.write(isoField('LINUX', 32), 8, 'latin1');
  pvd.write(isoField(opts.label, 32), 40, 'latin1');
  pvd.write((opts.created ?? '2024010203040506').padEnd(16, '0'), 813, 'latin1');
  pvd.write((opts.modified ?? '0000000000000000').padEnd(16, '0'), 830, 'latin1');
  let next = 0x8800;
  if (opts.joliet !== undefined) {
    const j = img.subarray(next, next + 2048);
    j[0] = 2;
    j.write('CD001', 1, 'latin1');
    j[6] = 1;
    j.write('%/E', 88, 'latin1');
    const name = Buffer.from(opts.joliet.padEnd(16, ' ').slice(0, 16), 'utf16le');
    name.swap16();
    name.copy(j, 40);
    next += 2048;
  }
  img[next] = 0xff;
  img.write('CD001', next + 1, 'latin1');
  return img;
}


/** Throws naming every missing program (tests fail, rather than skip, without their tools). */
export function requireTools(names: string[]): void {
  const dirs = (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin']);
  const missing = names.filter((n) => !dirs.some((d) => d && fs.existsSync(path.join(d, n))));
  if (missing.length > 0) {
    throw new Error(`required tools missing: ${missing.join(', ')} (install them with scripts/deps.sh: gdisk, xfsprogs, dosfstools, e2fsprogs, squashfs-tools-ng, xorriso, util-linux)`);
  }
}

/** `blkid -p -o export` parsed (values unescaped). */
export function parseBlkidExport(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    out[line.slice(0, eq)] = line.slice(eq + 1).replace(/\\(.)/g, '$1');
  }
  return out;
}

export { prng } from '../../test/lib/prng.ts';
