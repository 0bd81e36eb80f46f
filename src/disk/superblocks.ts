// Filesystem superblocks, read by hand for the type, UUID and LABEL that /dev/disk/by-uuid and
// by-label need: xfs, ext2/3/4, vfat (FAT12/16/32), squashfs and iso9660. The results match
// what `blkid -p` reports for the same bytes (the integration tests compare them).
//
// Written here rather than taken from a library: no maintained JavaScript package reads these
// superblocks (libblkid bindings need a native build; the pure-JS ones are unmaintained and
// cover other formats), and each probe is a few dozen lines.
import { type Reader, cString, isPowerOfTwo, trimEnd, utf16, uuidBE } from './block-reader.ts';

export interface Filesystem {
  /** As blkid names it: 'xfs', 'ext4', 'ext3', 'ext2', 'jbd', 'vfat', 'squashfs', 'squashfs3', 'iso9660'. */
  type: string;
  /** '' when the filesystem has none. */
  uuid: string;
  label: string;
  /** blkid's VERSION where it gives one ('FAT32', '4.0', 'Joliet Extension'), else ''. */
  version: string;
}

type Probe = (r: Reader) => Promise<Filesystem | undefined>;

/** Tried in order; vfat last, as its signature (55 aa) is the weakest. */
const PROBES: ReadonlyArray<[string, Probe]> = [
  ['xfs', probeXfs],
  ['ext', probeExt],
  ['squashfs', probeSquashfs],
  ['iso9660', probeIso9660],
  ['vfat', probeVfat],
];

/** The filesystem on a device, or undefined when none of the known ones is there. */
export async function probeFilesystem(r: Reader): Promise<Filesystem | undefined> {
  for (const [, probe] of PROBES) {
    const fs = await probe(r);
    if (fs) return fs;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// XFS: the superblock at byte 0, big-endian.

async function probeXfs(r: Reader): Promise<Filesystem | undefined> {
  const sb = await r.read(0, 512);
  if (sb.length < 120 || sb.subarray(0, 4).toString('latin1') !== 'XFSB') return undefined;
  const blocksize = sb.readUInt32BE(4);
  const dblocks = sb.readBigUInt64BE(8);
  const agblocks = sb.readUInt32BE(84);
  const agcount = sb.readUInt32BE(88);
  const sectsize = sb.readUInt16BE(102);
  const inodesize = sb.readUInt16BE(104);
  if (!isPowerOfTwo(blocksize) || blocksize < 512 || blocksize > 65536) return undefined;
  if (!isPowerOfTwo(sectsize) || sectsize < 512 || sectsize > 32768) return undefined;
  if (!isPowerOfTwo(inodesize) || inodesize < 256 || inodesize > 2048) return undefined;
  if (agcount === 0 || agblocks === 0 || dblocks === 0n) return undefined;
  return { type: 'xfs', uuid: uuidBE(sb, 32), label: cString(sb.subarray(108, 120)), version: '' };
}

// ---------------------------------------------------------------------------------------------
// ext2/3/4: the superblock at byte 1024, little-endian. Which of the three follows from the
// feature flags as blkid decides it.

const EXT_COMPAT_HAS_JOURNAL = 0x4;
const EXT_INCOMPAT_JOURNAL_DEV = 0x8;
/** Incompat features ext2/ext3 know: filetype, recover, meta_bg. */
const EXT3_INCOMPAT_KNOWN = 0x2 | 0x4 | 0x10;
/** Ro-compat features ext2/ext3 know: sparse_super, large_file, btree_dir. */
const EXT3_RO_COMPAT_KNOWN = 0x1 | 0x2 | 0x4;

async function probeExt(r: Reader): Promise<Filesystem | undefined> {
  const sb = await r.read(1024, 1024);
  if (sb.length < 0x88 || sb.readUInt16LE(0x38) !== 0xef53) return undefined;
  const logBlockSize = sb.readUInt32LE(0x18);
  if (logBlockSize > 6) return undefined;
  const compat = sb.readUInt32LE(0x5c);
  const incompat = sb.readUInt32LE(0x60);
  const roCompat = sb.readUInt32LE(0x64);
  let type: string;
  if (incompat & EXT_INCOMPAT_JOURNAL_DEV) type = 'jbd';
  else if (incompat & ~EXT3_INCOMPAT_KNOWN || roCompat & ~EXT3_RO_COMPAT_KNOWN) type = 'ext4';
  else if (compat & EXT_COMPAT_HAS_JOURNAL) type = 'ext3';
  else type = 'ext2';
  const major = sb.readUInt32LE(0x4c);
  const minor = sb.readUInt16LE(0x3e);
  return { type, uuid: uuidBE(sb, 0x68), label: cString(sb.subarray(0x78, 0x88)), version: `${major}.${minor}` };
}

// ---------------------------------------------------------------------------------------------
// squashfs: no UUID, no label; the type and version.

async function probeSquashfs(r: Reader): Promise<Filesystem | undefined> {
  const sb = await r.read(0, 96);
  if (sb.length < 32) return undefined;
  const magic = sb.subarray(0, 4).toString('latin1');
  let major: number;
  let minor: number;
  if (magic === 'hsqs') {
    major = sb.readUInt16LE(28);
    minor = sb.readUInt16LE(30);
  } else if (magic === 'sqsh') {
    major = sb.readUInt16BE(28);
    minor = sb.readUInt16BE(30);
  } else return undefined;
  if (major === 0 || major > 4) return undefined;
  return { type: major >= 4 ? 'squashfs' : 'squashfs3', uuid: '', label: '', version: `${major}.${minor}` };
}

// ---------------------------------------------------------------------------------------------
// iso9660: volume descriptors from 32 KiB, 2 KiB apart. The label is the primary descriptor's
// volume id, merged with the Joliet one as blkid does; the UUID is the modification (else
// creation) date as YYYY-MM-DD-HH-MM-SS-cc.

const ISO_VD_START = 0x8000;
const ISO_SECTOR = 0x800;

async function probeIso9660(r: Reader): Promise<Filesystem | undefined> {
  let pvd: Buffer | undefined;
  let joliet: Buffer | undefined;
  for (let i = 0; i < 16; i++) {
    const d = await r.read(ISO_VD_START + i * ISO_SECTOR, 883);
    if (d.length < 883 || d.subarray(1, 6).toString('latin1') !== 'CD001') break;
    const t = d[0]!;
    if (t === 0xff) break;
    if (t === 1 && !pvd) pvd = d;
    else if (t === 2 && !joliet) {
      const esc = d.subarray(88, 91).toString('latin1');
      if (esc === '%/@' || esc === '%/C' || esc === '%/E') joliet = d;
    }
    if (pvd && joliet) break;
  }
  if (!pvd) return undefined;
  const uuid = isoDate(pvd.subarray(830, 847)) ?? isoDate(pvd.subarray(813, 830)) ?? '';
  let label: string;
  if (joliet) {
    const merged = mergeJoliet(joliet.subarray(40, 72), pvd.subarray(40, 72));
    label = trimEnd(merged ?? utf16(joliet.subarray(40, 72), true));
  } else {
    label = trimEnd(pvd.subarray(40, 72).toString('latin1').replace(/\0.*$/su, ''));
  }
  return { type: 'iso9660', uuid, label, version: joliet ? 'Joliet Extension' : '' };
}

/** 16 digits and a timezone byte; undefined when unset (all '0' and offset 0). */
function isoDate(d: Buffer): string | undefined {
  if (d.length < 17) return undefined;
  const digits = d.subarray(0, 16).toString('latin1');
  if (/^0{16}$/.test(digits) && d[16] === 0) return undefined;
  if (!/^[0-9]{16}$/.test(digits)) return undefined;
  return `${digits.slice(0, 4)}-${digits.slice(4, 6)}-${digits.slice(6, 8)}-${digits.slice(8, 10)}-${digits.slice(10, 12)}-${digits.slice(12, 14)}-${digits.slice(14, 16)}`;
}

/**
 * Joliet keeps 16 UTF-16BE characters, the primary descriptor 32 ASCII ones with '_' for what
 * ASCII cannot hold. When Joliet's name is the other's prefix (ignoring case and the '_'
 * stand-ins), the original is Joliet's characters followed by the ASCII tail; else undefined.
 */
function mergeJoliet(u16be: Buffer, ascii: Buffer): string | undefined {
  const units: number[] = [];
  for (let i = 0; i + 1 < u16be.length; i += 2) units.push(u16be.readUInt16BE(i));
  let out = '';
  let a = 0;
  let u = 0;
  for (; u < units.length && a < ascii.length; u++, a++) {
    let cu = units[u]!;
    if (cu >= 0xd800 && cu <= 0xdbff && u + 1 < units.length && units[u + 1]! >= 0xdc00 && units[u + 1]! <= 0xdfff) {
      out += String.fromCharCode(cu);
      u++;
      cu = units[u]!;
    }
    const ac = ascii[a]!;
    if (ac === 0x5f) out += String.fromCharCode(cu);
    else if (cu === 0x5f) out += String.fromCharCode(ac);
    else if (cu < 0x100 && upper(ac) === upper(cu)) out += String.fromCharCode(ac >= 0x41 && ac <= 0x5a ? cu : ac);
    else return undefined;
  }
  for (; a < ascii.length; a++) out += String.fromCharCode(ascii[a]!);
  return out.replace(/\0.*$/su, '');
}

function upper(c: number): number {
  return c >= 0x61 && c <= 0x7a ? c - 0x20 : c;
}

// ---------------------------------------------------------------------------------------------
// vfat: the BIOS parameter block in the boot sector. The label is the root directory's volume
// label entry when there is one, else the boot sector's (blkid's order); "NO NAME" means none.

const FAT12_MAX = 0xff4;
const FAT16_MAX = 0xfff4;
const FAT32_MAX = 0x0ffffff6;
const NO_NAME = 'NO NAME    ';

async function probeVfat(r: Reader): Promise<Filesystem | undefined> {
  const bs = await r.read(0, 512);
  if (bs.length < 512 || bs[510] !== 0x55 || bs[511] !== 0xaa) return undefined;
  const sectorSize = bs.readUInt16LE(11);
  const clusterSize = bs[13]!;
  const reserved = bs.readUInt16LE(14);
  const fats = bs[16]!;
  const dirEntries = bs.readUInt16LE(17);
  const sectors16 = bs.readUInt16LE(19);
  const media = bs[21]!;
  const fatLength16 = bs.readUInt16LE(22);
  const sectors32 = bs.readUInt32LE(32);
  const fatLength32 = bs.readUInt32LE(36);
  if (!isPowerOfTwo(sectorSize) || sectorSize < 512 || sectorSize > 4096) return undefined;
  if (!isPowerOfTwo(clusterSize)) return undefined;
  if (reserved === 0 || fats === 0 || fats > 4) return undefined;
  if (!(media >= 0xf8 || media === 0xf0)) return undefined;
  const sectors = sectors16 !== 0 ? sectors16 : sectors32;
  const fatLength = fatLength16 !== 0 ? fatLength16 : fatLength32;
  const isFat32 = fatLength16 === 0 && fatLength32 !== 0;
  if (fatLength === 0 || sectors === 0) return undefined;
  const dirSectors = Math.ceil((dirEntries * 32) / sectorSize);
  const dataStart = reserved + fats * fatLength + dirSectors;
  if (dataStart >= sectors) return undefined;
  const clusters = Math.floor((sectors - dataStart) / clusterSize);
  const maxClusters = isFat32 ? FAT32_MAX : clusters > FAT12_MAX ? FAT16_MAX : FAT12_MAX;
  if (clusters > maxClusters) return undefined;
  const version = isFat32 ? 'FAT32' : clusters > FAT12_MAX ? 'FAT16' : 'FAT12';

  // The extended BPB sits at 0x26 (FAT12/16) or 0x42 (FAT32); its signature 0x29 (or 0x28) says
  // the serial number and label fields are there.
  const ext = isFat32 ? 0x42 : 0x26;
  const hasExt = bs[ext] === 0x29 || bs[ext] === 0x28;
  let uuid = '';
  let bootLabel = '';
  if (hasExt) {
    const s = bs.subarray(ext + 1, ext + 5);
    uuid = hex2(s[3]!) + hex2(s[2]!) + '-' + hex2(s[1]!) + hex2(s[0]!);
    if (bs[ext] === 0x29) {
      const l = bs.subarray(ext + 5, ext + 16).toString('latin1');
      if (l !== NO_NAME) bootLabel = trimEnd(l.replace(/\0.*$/su, ''));
    }
  }
  let dirLabel: string | undefined;
  if (isFat32) {
    const rootCluster = bs.readUInt32LE(44);
    dirLabel = await fat32RootLabel(r, { sectorSize, clusterSize, reserved, dataStart, rootCluster });
  } else if (dirEntries > 0) {
    const root = await r.read((reserved + fats * fatLength) * sectorSize, Math.min(dirEntries, 4096) * 32);
    dirLabel = findVolumeLabel(root).label;
  }
  return { type: 'vfat', uuid, label: dirLabel ?? bootLabel, version };
}

function hex2(b: number): string {
  return b.toString(16).toUpperCase().padStart(2, '0');
}

/** Scans 32-byte directory entries for the volume label; `end` when the end-of-directory entry was seen. */
function findVolumeLabel(dir: Buffer): { label?: string; end: boolean } {
  for (let o = 0; o + 32 <= dir.length; o += 32) {
    const first = dir[o]!;
    if (first === 0) return { end: true };
    if (first === 0xe5) continue; // deleted
    const attr = dir[o + 11]!;
    if ((attr & 0x3f) === 0x0f) continue; // a long-name entry
    if ((attr & (0x08 | 0x10)) !== 0x08) continue;
    const raw = Buffer.from(dir.subarray(o, o + 11));
    if (raw[0] === 0x05) raw[0] = 0xe5;
    const name = raw.toString('latin1');
    if (name === NO_NAME) return { end: true };
    return { label: trimEnd(name.replace(/\0.*$/su, '')), end: true };
  }
  return { end: false };
}

async function fat32RootLabel(
  r: Reader,
  g: { sectorSize: number; clusterSize: number; reserved: number; dataStart: number; rootCluster: number },
): Promise<string | undefined> {
  const clusterBytes = g.sectorSize * g.clusterSize;
  let cluster = g.rootCluster;
  // Follow the root directory's cluster chain, within bounds: a loop or a huge chain is not followed far.
  for (let hops = 0; hops < 64 && cluster >= 2 && cluster < 0x0ffffff7; hops++) {
    const dir = await r.read((g.dataStart + (cluster - 2) * g.clusterSize) * g.sectorSize, Math.min(clusterBytes, 1 << 20));
    if (dir.length === 0) return undefined;
    const found = findVolumeLabel(dir);
    if (found.end) return found.label;
    const next = await r.read(g.reserved * g.sectorSize + cluster * 4, 4);
    if (next.length < 4) return undefined;
    cluster = next.readUInt32LE(0) & 0x0fffffff;
  }
  return undefined;
}
