// LUKS2 headers, written and read in TypeScript: a volume Bronze formats here opens with
// cryptsetup, and one cryptsetup formats (argon2id, argon2i or PBKDF2 keyslots) opens here. By
// hand because no npm library reads or writes LUKS2, and cryptsetup with its libraries (OpenSSL,
// json-c, libdevmapper, argon2) would not fit in the initramfs; Node brings OpenSSL's PBKDF2,
// Argon2 (crypto.argon2Sync, Node 24.7+), SHA-256 and AES-XTS already. The format is
// cryptsetup's "LUKS2 On-Disk Format Specification":
//
//   0        binary header (4 KiB), then the JSON area          primary header, hdr_size bytes
//   hdr_size the same again, magic "SKUL\xba\xbe"                 secondary header
//   32 KiB   keyslot areas: each an AF-split master key, AES-XTS-encrypted with a key the
//            keyslot's KDF derives from a passphrase (slot N at 32 KiB + N × 252 KiB)
//   16 MiB   the encrypted data (the dm-crypt segment)
//
// New keyslots use argon2id, cryptsetup's LUKS2 default, with the JSON cryptsetup writes
// (`kdf: {type: "argon2id", time, memory (KiB), cpus, salt}`; Argon2 version 0x13, no secret, no
// associated data, the output as long as the keyslot's key). Unlike cryptsetup (up to 1 GiB),
// the memory cost is bounded for a 512 MiB node: 64 MiB and two lanes, with the number of
// passes calibrated to about a second here (at least 4, cryptsetup's floor; a machine too slow
// for that, such as QEMU's TCG, gets down to 32 MiB instead). Opening refuses, by name, a
// keyslot asking for more than half the machine's memory. PBKDF2-SHA256
// keyslots (what Bronze wrote before) still open; src/machined/encryption.ts re-writes them as
// argon2id at the next key sync. The volume digest stays PBKDF2-SHA256, as in cryptsetup.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { Luks2Error, calibrateArgon2, calibrateIterations, deriveKek, type Luks2Kdf } from './luks2-kdf.ts';

export { ARGON2_MEMORY_KIB, ARGON2_MIN_MEMORY_KIB, ARGON2_MIN_TIME, READABLE_KDFS, calibrateArgon2 } from './luks2-kdf.ts';
export { Luks2Error, type Luks2Kdf };

export const LUKS2_MAGIC = Buffer.from('LUKS\xba\xbe', 'latin1');
const SECONDARY_MAGIC = Buffer.from('SKUL\xba\xbe', 'latin1');
const BINARY_SIZE = 4096;
/** Header size (binary + JSON), cryptsetup's default; the JSON area is what is left of it. */
export const HEADER_SIZE = 16384;
const KEYSLOTS_START = 2 * HEADER_SIZE;
/** Where the data starts: 16 MiB, as cryptsetup puts it. */
export const DATA_OFFSET = 16 << 20;
const STRIPES = 4000;
const SECTOR = 512;

export const CIPHER = 'aes-xts-plain64';
export type SectorSize = 512 | 4096;

export interface KeyslotOptions {
  /** The KDF of the new keyslots; default: argon2id calibrated to about a second here (calibrateArgon2). */
  kdf?: Luks2Kdf;
  /** PBKDF2 keyslots with this many iterations (what Bronze wrote before argon2id; tests). Ignored with `kdf`. */
  iterations?: number;
}

export interface Luks2FormatOptions extends KeyslotOptions {
  /** Passphrases by keyslot number (0–31). */
  keys: Array<{ slot: number; passphrase: Buffer }>;
  /** Master key bytes: 64 (AES-256-XTS, the default) or 32 (AES-128-XTS). */
  keySize?: 32 | 64;
  /** The data segment's encryption sector size (512 default, or 4096). */
  sectorSize?: SectorSize;
  /** PBKDF2 iterations of the volume digest; default: an eighth of the keyslots' PBKDF2, else about 125 ms here (cryptsetup's). */
  digestIterations?: number;
  /** For tests: the master key (default random). */
  masterKey?: Buffer;
}

/** What dm-crypt needs to map the data: the key and where the data lies. */
export interface Luks2Volume {
  uuid: string;
  cipher: string;
  masterKey: Buffer;
  /** Data offset and encryption sector size, in bytes. */
  dataOffset: number;
  sectorSize: SectorSize;
  /** The data's length in bytes when the header fixes it; undefined: to the end of the device. */
  dataSize?: number;
  /** The keyslot the passphrase opened. */
  slot: number;
  /** That keyslot's KDF type (pbkdf2, argon2id, argon2i). */
  kdf: string;
}

/** Does the buffer (the first bytes of a device) start with a LUKS header, of any version? */
export const isLuks = (head: Buffer): boolean => head.length >= 6 && head.subarray(0, 6).equals(LUKS2_MAGIC);

const kdfOf = (o: KeyslotOptions): Luks2Kdf => o.kdf ?? (o.iterations ? { type: 'pbkdf2', iterations: o.iterations } : calibrateArgon2(1000));

/** H(i || block) over each hash-sized block: the diffusion between AF stripes (LUKS1's AF, which LUKS2 keeps). */
function diffuse(buf: Buffer, hash: string): Buffer<ArrayBuffer> {
  const size = crypto.createHash(hash).digest().length;
  const out = Buffer.alloc(buf.length);
  for (let i = 0, at = 0; at < buf.length; i++, at += size) {
    const n = Math.min(size, buf.length - at);
    const index = Buffer.alloc(4);
    index.writeUInt32BE(i);
    crypto.createHash(hash).update(index).update(buf.subarray(at, at + n)).digest().copy(out, at, 0, n);
  }
  return out;
}

const xor = (a: Buffer, b: Buffer): Buffer<ArrayBuffer> => {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
};

/** The anti-forensic split: `stripes` blocks, all of which are needed to get the key back. */
export function afSplit(key: Buffer, stripes: number, hash: string): Buffer {
  const out = Buffer.alloc(key.length * stripes);
  let d = Buffer.alloc(key.length);
  for (let i = 0; i < stripes - 1; i++) {
    const s = crypto.randomBytes(key.length);
    s.copy(out, i * key.length);
    d = diffuse(xor(d, s), hash);
  }
  xor(d, key).copy(out, (stripes - 1) * key.length);
  return out;
}

export function afMerge(material: Buffer, keySize: number, stripes: number, hash: string): Buffer {
  let d = Buffer.alloc(keySize);
  for (let i = 0; i < stripes - 1; i++) d = diffuse(xor(d, material.subarray(i * keySize, (i + 1) * keySize)), hash);
  return xor(d, material.subarray((stripes - 1) * keySize, stripes * keySize));
}

/** AES-XTS over whole sectors with plain64 IVs (the sector number, little-endian), from sector 0. */
function xts(data: Buffer, key: Buffer, sectorSize: number, encrypt: boolean): Buffer {
  const algo = key.length === 64 ? 'aes-256-xts' : key.length === 32 ? 'aes-128-xts' : undefined;
  if (!algo) throw new Luks2Error(`aes-xts takes a 32- or 64-byte key, not ${key.length} bytes`);
  const out = Buffer.alloc(data.length);
  for (let s = 0; s * sectorSize < data.length; s++) {
    const iv = Buffer.alloc(16);
    iv.writeBigUInt64LE(BigInt(s));
    const c = encrypt ? crypto.createCipheriv(algo, key, iv) : crypto.createDecipheriv(algo, key, iv);
    const part = data.subarray(s * sectorSize, (s + 1) * sectorSize);
    Buffer.concat([c.update(part), c.final()]).copy(out, s * sectorSize);
  }
  return out;
}

const areaSize = (keySize: number) => Math.ceil((keySize * STRIPES) / 4096) * 4096;
const b64 = (b: Buffer) => b.toString('base64');

interface Luks2Json {
  keyslots: Record<string, {
    type: string;
    key_size: number;
    af: { type: string; stripes: number; hash: string };
    area: { type: string; offset: string; size: string; encryption: string; key_size: number };
    kdf: { type: string; hash?: string; iterations?: number; time?: number; memory?: number; cpus?: number; salt: string };
  }>;
  tokens: Record<string, unknown>;
  segments: Record<string, { type: string; offset: string; size: string; iv_tweak: string; encryption: string; sector_size: number }>;
  digests: Record<string, { type: string; keyslots: string[]; segments: string[]; hash: string; iterations: number; salt: string; digest: string }>;
  config: { json_size: string; keyslots_size: string; requirements?: unknown };
}

/** One header copy: the binary part, the JSON, and the checksum over both. */
function header(json: string, uuid: string, secondary: boolean, seqid: bigint): Buffer {
  const h = Buffer.alloc(HEADER_SIZE);
  (secondary ? SECONDARY_MAGIC : LUKS2_MAGIC).copy(h, 0);
  h.writeUInt16BE(2, 6);
  h.writeBigUInt64BE(BigInt(HEADER_SIZE), 8);
  h.writeBigUInt64BE(seqid, 16);
  h.write('sha256', 72, 'latin1');
  crypto.randomBytes(64).copy(h, 104);
  h.write(uuid, 168, 'latin1');
  h.writeBigUInt64BE(BigInt(secondary ? HEADER_SIZE : 0), 256);
  const text = Buffer.from(json, 'utf8');
  if (text.length >= HEADER_SIZE - BINARY_SIZE) throw new Luks2Error(`LUKS2 metadata of ${text.length} bytes does not fit its ${HEADER_SIZE - BINARY_SIZE}-byte area`);
  text.copy(h, BINARY_SIZE);
  crypto.createHash('sha256').update(h).digest().copy(h, 448);
  return h;
}

type Keyslot = Luks2Json['keyslots'][string];

/**
 * A keyslot holding `masterKey` under `passphrase`, for the area at `offset`: its metadata and
 * its area's bytes, checked to give the master key back before anything is written.
 */
function sealKeyslot(masterKey: Buffer, passphrase: Buffer, kdf: Luks2Kdf, offset: number): { entry: Keyslot; data: Buffer } {
  const keySize = masterKey.length;
  const salt = crypto.randomBytes(32);
  const json = kdf.type === 'pbkdf2' ? { type: 'pbkdf2', hash: 'sha256', iterations: kdf.iterations } : { type: kdf.type, time: kdf.time, memory: kdf.memory, cpus: kdf.cpus };
  const kek = deriveKek(json, salt, passphrase, keySize, 'the new keyslot');
  const material = afSplit(masterKey, STRIPES, 'sha256');
  const data = xts(material, kek, SECTOR, true);
  material.fill(0);
  const back = afMerge(xts(data, kek, SECTOR, false), keySize, STRIPES, 'sha256');
  kek.fill(0);
  if (!back.equals(masterKey)) throw new Luks2Error('a new keyslot did not give the master key back: nothing written');
  back.fill(0);
  return {
    data,
    entry: {
      type: 'luks2',
      key_size: keySize,
      af: { type: 'luks1', stripes: STRIPES, hash: 'sha256' },
      area: { type: 'raw', offset: String(offset), size: String(areaSize(keySize)), encryption: CIPHER, key_size: keySize },
      kdf: { ...json, salt: b64(salt) },
    },
  };
}

/** Writes keyslot areas, syncs them, and reads each back: a header never points at an area that is not as written. */
function writeAreas(fd: number, areas: ReadonlyArray<{ offset: number; data: Buffer }>): void {
  for (const a of areas) fs.writeSync(fd, a.data, 0, a.data.length, a.offset);
  fs.fsyncSync(fd);
  for (const a of areas) {
    const back = Buffer.alloc(a.data.length);
    fs.readSync(fd, back, 0, back.length, a.offset);
    if (!back.equals(a.data)) throw new Luks2Error(`the keyslot area at ${a.offset} does not read back as written: the headers are left as they were`);
  }
}

/** Both header copies, the secondary first: a write cut off midway leaves one valid copy. */
function writeHeaders(fd: number, json: Luks2Json, uuid: string, seqid: bigint): void {
  const text = JSON.stringify(json);
  fs.writeSync(fd, header(text, uuid, true, seqid), 0, HEADER_SIZE, HEADER_SIZE);
  fs.fsyncSync(fd);
  fs.writeSync(fd, header(text, uuid, false, seqid), 0, HEADER_SIZE, 0);
  fs.fsyncSync(fd);
}

function checkSlot(slot: number): void {
  if (!Number.isInteger(slot) || slot < 0 || slot > 31) throw new Luks2Error(`keyslot ${slot} is not one of LUKS2's 0–31`);
}

/**
 * Formats `fd` (a partition, or a file for tests) as LUKS2 with one keyslot per key, writing
 * both header copies and the keyslots; the data area is not touched. Returns the volume, whose
 * master key maps it. The device must be larger than the 16 MiB of header and keyslots.
 */
export function formatLuks2(fd: number, size: number, o: Luks2FormatOptions): Luks2Volume {
  const keySize = o.keySize ?? 64;
  const sectorSize = o.sectorSize ?? 512;
  if (keySize !== 32 && keySize !== 64) throw new Luks2Error(`aes-xts-plain64 takes a 256- or 512-bit key, not ${keySize * 8} bits`);
  if (sectorSize !== 512 && sectorSize !== 4096) throw new Luks2Error(`sector size ${sectorSize}: LUKS2 here takes 512 or 4096`);
  if (o.keys.length === 0) throw new Luks2Error('no keys: a LUKS2 volume needs at least one keyslot');
  const seen = new Set<number>();
  for (const k of o.keys) {
    checkSlot(k.slot);
    if (seen.has(k.slot)) throw new Luks2Error(`keyslot ${k.slot} is given twice`);
    seen.add(k.slot);
    if (k.passphrase.length === 0) throw new Luks2Error(`keyslot ${k.slot}: the passphrase is empty`);
  }
  if (size <= DATA_OFFSET) throw new Luks2Error(`the device (${size} bytes) is too small for LUKS2's 16 MiB of header and keyslots`);

  const masterKey = o.masterKey ?? crypto.randomBytes(keySize);
  const kdf = kdfOf(o);
  const digestIterations = o.digestIterations ?? (kdf.type === 'pbkdf2' ? Math.max(1000, Math.round(kdf.iterations / 8)) : calibrateIterations(125, 32));
  const uuid = crypto.randomUUID();
  const digestSalt = crypto.randomBytes(32);
  const json: Luks2Json = {
    keyslots: {},
    tokens: {},
    // "dynamic": the data runs to the end of the device. A device that does not end on a whole
    // sector gets a fixed size instead, which cryptsetup too maps as it is.
    segments: { '0': { type: 'crypt', offset: String(DATA_OFFSET), size: (size - DATA_OFFSET) % sectorSize ? String(size - DATA_OFFSET - ((size - DATA_OFFSET) % sectorSize)) : 'dynamic', iv_tweak: '0', encryption: CIPHER, sector_size: sectorSize } },
    digests: {
      '0': {
        type: 'pbkdf2',
        keyslots: [],
        segments: ['0'],
        hash: 'sha256',
        iterations: digestIterations,
        salt: b64(digestSalt),
        digest: b64(crypto.pbkdf2Sync(masterKey, digestSalt, digestIterations, 32, 'sha256')),
      },
    },
    config: { json_size: String(HEADER_SIZE - BINARY_SIZE), keyslots_size: String(DATA_OFFSET - KEYSLOTS_START) },
  };
  const areas: Array<{ offset: number; data: Buffer }> = [];
  for (const k of [...o.keys].sort((a, b) => a.slot - b.slot)) {
    const offset = KEYSLOTS_START + k.slot * areaSize(keySize);
    const { entry, data } = sealKeyslot(masterKey, k.passphrase, kdf, offset);
    areas.push({ offset, data });
    json.keyslots[String(k.slot)] = entry;
    json.digests['0']!.keyslots.push(String(k.slot));
  }
  // The keyslots first and the headers last: a volume cut off half-written has no valid header,
  // rather than a header pointing at keyslots that are not there.
  const zero = Buffer.alloc(DATA_OFFSET - KEYSLOTS_START);
  fs.writeSync(fd, zero, 0, zero.length, KEYSLOTS_START);
  writeAreas(fd, areas);
  writeHeaders(fd, json, uuid, 1n);
  const fixed = json.segments['0']!.size;
  return { uuid, cipher: CIPHER, masterKey, dataOffset: DATA_OFFSET, sectorSize, ...(fixed !== 'dynamic' ? { dataSize: Number(fixed) } : {}), slot: Math.min(...o.keys.map((k) => k.slot)), kdf: kdf.type };
}

/** Reads and checks one header copy at `offset`; undefined when it is not a valid LUKS2 header. */
interface HeaderCopy {
  json: Luks2Json;
  uuid: string;
  seqid: bigint;
  /** hdr_size: binary header and JSON area. */
  size: number;
}

function readHeader(fd: number, offset: number, magic: Buffer): HeaderCopy | string {
  const bin = Buffer.alloc(BINARY_SIZE);
  if (fs.readSync(fd, bin, 0, BINARY_SIZE, offset) < BINARY_SIZE) return 'short read';
  if (!bin.subarray(0, 6).equals(magic)) return 'no LUKS magic';
  const version = bin.readUInt16BE(6);
  if (version !== 2) return `LUKS version ${version}, not 2`;
  const size = Number(bin.readBigUInt64BE(8));
  if (size < BINARY_SIZE + 1024 || size > 4 << 20 || size % 4096 !== 0) return `header size ${size} is not a LUKS2 one`;
  const alg = bin.toString('latin1', 72, 104).replace(/\0.*$/s, '');
  if (alg !== 'sha256') return `header checksum ${alg || '(none)'}: only sha256 is read`;
  const h = Buffer.alloc(size);
  if (fs.readSync(fd, h, 0, size, offset) < size) return 'short read';
  const want = Buffer.from(h.subarray(448, 480));
  h.fill(0, 448, 512);
  if (!crypto.createHash('sha256').update(h).digest().equals(want)) return 'header checksum mismatch';
  const text = h.toString('utf8', BINARY_SIZE).replace(/\0.*$/s, '');
  try {
    return { json: JSON.parse(text) as Luks2Json, uuid: h.toString('latin1', 168, 208).replace(/\0.*$/s, ''), seqid: h.readBigUInt64BE(16), size };
  } catch (err) {
    return `metadata is not JSON: ${(err as Error).message}`;
  }
}

/**
 * The volume's header: of the valid copies (the primary, and the secondary at the offsets LUKS2
 * allows), the one with the highest sequence number, as cryptsetup chooses: after a write cut
 * off between the two copies, Bronze and cryptsetup see the same keyslots.
 */
export function readLuks2(fd: number): HeaderCopy {
  const primary = readHeader(fd, 0, LUKS2_MAGIC);
  let best = typeof primary === 'string' ? undefined : primary;
  for (const at of [16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152, 4194304]) {
    const secondary = readHeader(fd, at, SECONDARY_MAGIC);
    if (typeof secondary === 'string') continue;
    if (!best || secondary.seqid > best.seqid) best = secondary;
    break;
  }
  if (!best) throw new Luks2Error(`not a LUKS2 volume: ${primary as string}`);
  return best;
}

/**
 * Opens the volume with one passphrase: tries that keyslot alone when `slot` is given (as
 * cryptsetup's --key-slot), every keyslot in order otherwise, and returns the master key and
 * segment of the first the passphrase opens. Throws a Luks2Error naming why none opened.
 */
export function unlockLuks2(fd: number, passphrase: Buffer, slot?: number): Luks2Volume {
  const { json, uuid } = readLuks2(fd);
  const segment = json.segments['0'];
  if (!segment || segment.type !== 'crypt') throw new Luks2Error('no crypt segment 0 in the LUKS2 metadata');
  if (segment.encryption !== CIPHER) throw new Luks2Error(`the data is encrypted with ${segment.encryption}; Bronze maps ${CIPHER} only`);
  if (segment.sector_size !== 512 && segment.sector_size !== 4096) throw new Luks2Error(`segment sector size ${segment.sector_size} is not 512 or 4096`);
  // What dm-crypt would need told and Bronze does not tell it: mapping such a volume would
  // decrypt it wrongly, so it is refused by name.
  if (segment.iv_tweak !== '0') throw new Luks2Error(`the data segment's IV tweak is ${segment.iv_tweak}; Bronze maps volumes whose IVs start at 0 only`);
  if (json.config.requirements) throw new Luks2Error(`the volume has requirements (${JSON.stringify(json.config.requirements)}), e.g. a re-encryption in progress; open it with cryptsetup`);
  let ids = Object.keys(json.keyslots).sort((a, b) => Number(a) - Number(b));
  if (slot !== undefined) {
    if (!ids.includes(String(slot))) throw new Luks2Error(`keyslot ${slot} is not in use (in use: ${ids.join(', ') || 'none'})`);
    ids = [String(slot)];
  }
  const skipped: string[] = [];
  for (const id of ids) {
    const ks = json.keyslots[id]!;
    const digest = Object.values(json.digests).find((d) => d.keyslots.includes(id) && d.segments.includes('0'));
    if (!digest) continue;
    if (ks.area.encryption !== CIPHER || ks.af.type !== 'luks1') {
      skipped.push(`keyslot ${id} is encrypted with ${ks.area.encryption}, af ${ks.af.type}`);
      continue;
    }
    let kek: Buffer;
    try {
      kek = deriveKek(ks.kdf, Buffer.from(ks.kdf.salt, 'base64'), passphrase, ks.area.key_size, `keyslot ${id}`);
    } catch (err) {
      if (!(err instanceof Luks2Error)) throw err;
      skipped.push(err.message);
      continue;
    }
    const length = Math.ceil((ks.key_size * ks.af.stripes) / SECTOR) * SECTOR;
    const sealed = Buffer.alloc(length);
    fs.readSync(fd, sealed, 0, length, Number(ks.area.offset));
    const material = xts(sealed, kek, SECTOR, false);
    kek.fill(0);
    const masterKey = afMerge(material, ks.key_size, ks.af.stripes, ks.af.hash);
    material.fill(0);
    const check = crypto.pbkdf2Sync(masterKey, Buffer.from(digest.salt, 'base64'), digest.iterations, Buffer.from(digest.digest, 'base64').length, digest.hash);
    if (crypto.timingSafeEqual(check, Buffer.from(digest.digest, 'base64'))) {
      const dataSize = segment.size === 'dynamic' ? {} : { dataSize: Number(segment.size) };
      return { uuid, cipher: segment.encryption, masterKey, dataOffset: Number(segment.offset), sectorSize: segment.sector_size as SectorSize, ...dataSize, slot: Number(id), kdf: ks.kdf.type };
    }
  }
  throw new Luks2Error(['no keyslot opens with this key', ...skipped].join('; '));
}

/**
 * Rewrites the volume's keyslots (cryptsetup's luksAddKey, luksChangeKey and luksKillSlot in
 * one): the slots in `keep` stay as they are, each of `add` gets a new keyslot holding
 * `masterKey` (replacing one of the same number: how a PBKDF2 keyslot is re-written as argon2id),
 * and every other slot goes. The new keyslots are checked to give the master key back, written
 * to areas no keyslot uses, synced and read back; then the headers (secondary first, sequence
 * number one up), and only then are the areas of the slots gone zeroed: a write cut off at any
 * point leaves a header whose keyslots all work (the old one, whose areas are untouched, until
 * a new copy is whole). `masterKey` must be the volume's (checked against its digest first).
 */
export function rewriteKeyslots(fd: number, masterKey: Buffer, keep: readonly number[], add: ReadonlyArray<{ slot: number; passphrase: Buffer }>, o: KeyslotOptions = {}): void {
  const { json, uuid, seqid, size: hdrSize } = readLuks2(fd);
  // The headers are rewritten where Bronze puts them: a volume with another metadata size
  // (cryptsetup --luks2-metadata-size) keeps its keyslots as they are.
  if (hdrSize !== HEADER_SIZE || json.config.json_size !== String(HEADER_SIZE - BINARY_SIZE)) {
    throw new Luks2Error(`the LUKS2 metadata is ${hdrSize} bytes, not ${HEADER_SIZE}: Bronze rewrites only headers of its own size; change its keys with cryptsetup`);
  }
  const digest = Object.values(json.digests).find((d) => d.segments.includes('0'));
  if (!digest) throw new Luks2Error('no digest for segment 0 in the LUKS2 metadata');
  const check = crypto.pbkdf2Sync(masterKey, Buffer.from(digest.salt, 'base64'), digest.iterations, Buffer.from(digest.digest, 'base64').length, digest.hash);
  if (!crypto.timingSafeEqual(check, Buffer.from(digest.digest, 'base64'))) throw new Luks2Error("the key given is not this volume's master key");
  for (const k of add) {
    checkSlot(k.slot);
    if (k.passphrase.length === 0) throw new Luks2Error(`keyslot ${k.slot}: the passphrase is empty`);
  }
  const old = json.keyslots;
  const next: Luks2Json['keyslots'] = {};
  for (const slot of keep) if (old[String(slot)] && !add.some((a) => a.slot === slot)) next[String(slot)] = old[String(slot)]!;
  if (Object.keys(next).length + add.length === 0) throw new Luks2Error('that would leave the volume without a keyslot');
  // Every area a keyslot of the old header uses stays as it is until the new header is written.
  const busy = Object.values(old).map((k) => [Number(k.area.offset), Number(k.area.offset) + Number(k.area.size)] as const);
  const size = areaSize(masterKey.length);
  const end = KEYSLOTS_START + Number(json.config.keyslots_size);
  const freeArea = (): number => {
    for (let at = KEYSLOTS_START; at + size <= end; at += size) {
      if (!busy.some(([a, b]) => at < b && a < at + size)) return at;
    }
    throw new Luks2Error('no room left in the keyslots area');
  };
  const kdf = add.length ? kdfOf(o) : undefined;
  const writes: Array<{ offset: number; data: Buffer }> = [];
  for (const k of add) {
    const offset = freeArea();
    const { entry, data } = sealKeyslot(masterKey, k.passphrase, kdf!, offset);
    busy.push([offset, offset + size]);
    next[String(k.slot)] = entry;
    writes.push({ offset, data });
  }
  const ids = Object.keys(next).sort((a, b) => Number(a) - Number(b));
  json.keyslots = Object.fromEntries(ids.map((id) => [id, next[id]!]));
  for (const d of Object.values(json.digests)) if (d.segments.includes('0')) d.keyslots = ids;
  writeAreas(fd, writes);
  writeHeaders(fd, json, uuid, seqid + 1n);
  for (const [id, k] of Object.entries(old)) {
    if (next[id] === k) continue;
    const zero = Buffer.alloc(Number(k.area.size));
    fs.writeSync(fd, zero, 0, zero.length, Number(k.area.offset));
  }
  fs.fsyncSync(fd);
}
