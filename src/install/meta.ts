// The META partition (1 MiB, raw): a small string-to-string store that survives reinstalls of
// BOOT and resets of STATE. Hand-written: it is Bronze's own format (Talos has a similar one,
// not a library), and a few dozen bytes of header with a CRC are all it needs.
//
// Two copies, the first and the second half of the region (512 KiB each on the partition).
// Each copy, little-endian:
//
//    0  magic "BRONZEMETA" (10 bytes)
//   10  format version, u16 (1)
//   12  reserved, u32 (0)
//   16  sequence, u64: which copy is newer
//   24  payload length in bytes, u32
//   28  CRC32 (zlib's) of bytes 0..27 then the payload
//   32  payload: a JSON object of strings to strings, UTF-8, keys sorted
//
// Reading takes the valid copy with the highest sequence; no valid copy (an all-zero partition
// after install) is an empty store. A write goes to the copy that is NOT the current one, with
// the sequence + 1, then fsync: a write torn by a power cut damages only that copy, and the
// reader falls back to the other, which still holds the previous values. A copy of an unknown
// version counts as damaged.
import fs from 'node:fs';
import zlib from 'node:zlib';

export const META_SIZE = 1024 * 1024;
export const META_MAGIC = 'BRONZEMETA';
export const META_VERSION = 1;
export const META_HEADER_SIZE = 32;

/**
 * Keys of the node's configuration record (src/machined/recovery.ts): that a configuration was
 * activated on this disk (an ISO time), and the recovery identity its API serves with when that
 * configuration cannot be used at boot (JSON: the OS CA certificate, a server certificate and
 * its key; never the CA's key). A reset that wipes STATE removes both.
 */
export const META_CONFIGURED = 'config.configured';
export const META_RECOVERY = 'config.recovery';

/** Positional access to the region's device (a partition, an image, a file in a test). */
export interface MetaDevice {
  /** Up to length bytes at offset (fewer past the end). */
  read(offset: number, length: number): Buffer;
  write(offset: number, bytes: Buffer): void;
  sync(): void;
}

/** A MetaDevice over an open file descriptor (not closed by it). */
export function fdDevice(fd: number): MetaDevice {
  return {
    read(offset, length) {
      const buf = Buffer.alloc(length);
      let got = 0;
      while (got < length) {
        const n = fs.readSync(fd, buf, got, length - got, offset + got);
        if (n === 0) break;
        got += n;
      }
      return buf.subarray(0, got);
    },
    write(offset, bytes) {
      let done = 0;
      while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done, offset + done);
    },
    sync: () => fs.fsyncSync(fd),
  };
}

export type CopyIndex = 0 | 1;

export interface MetaState {
  values: Map<string, string>;
  /** The current copy's sequence; 0n when there is none. */
  sequence: bigint;
  /** The copy the values come from; undefined when none is valid. */
  copy: CopyIndex | undefined;
  /** Copies that hold something (not all zeros) but are not valid. */
  damaged: CopyIndex[];
  /** No valid copy although something was written: the values are lost (empty here). */
  corrupt: boolean;
}

/** A copy's bytes (header and payload); throws when the values do not fit in copySize bytes. */
export function encodeMetaCopy(values: ReadonlyMap<string, string>, sequence: bigint, copySize: number): Buffer {
  for (const [k, v] of values) {
    if (typeof k !== 'string' || typeof v !== 'string') throw new Error(`META: ${String(k)}: keys and values must be strings`);
  }
  const sorted = [...values].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const payload = Buffer.from(JSON.stringify(Object.fromEntries(sorted)), 'utf8');
  const max = copySize - META_HEADER_SIZE;
  if (payload.length > max) {
    throw new Error(`META: the values take ${payload.length} bytes, a copy holds at most ${max} (${values.size} keys)`);
  }
  const header = Buffer.alloc(META_HEADER_SIZE);
  header.write(META_MAGIC, 0, 'latin1');
  header.writeUInt16LE(META_VERSION, 10);
  header.writeBigUInt64LE(sequence, 16);
  header.writeUInt32LE(payload.length, 24);
  header.writeUInt32LE(zlib.crc32(payload, zlib.crc32(header.subarray(0, 28))), 28);
  return Buffer.concat([header, payload]);
}

type Decoded = { kind: 'blank' } | { kind: 'damaged'; reason: string } | { kind: 'valid'; sequence: bigint; values: Map<string, string> };

/** Decodes the copy at offset: blank (all-zero header), damaged (with the reason) or valid. */
export function decodeMetaCopy(dev: MetaDevice, offset: number, copySize: number): Decoded {
  const header = dev.read(offset, META_HEADER_SIZE);
  if (header.length < META_HEADER_SIZE) return { kind: 'damaged', reason: 'short read' };
  if (header.every((b) => b === 0)) return { kind: 'blank' };
  if (header.toString('latin1', 0, 10) !== META_MAGIC) return { kind: 'damaged', reason: 'bad magic' };
  const version = header.readUInt16LE(10);
  if (version !== META_VERSION) return { kind: 'damaged', reason: `unknown version ${version}` };
  const length = header.readUInt32LE(24);
  if (length > copySize - META_HEADER_SIZE) return { kind: 'damaged', reason: `payload length ${length} too large` };
  const payload = dev.read(offset + META_HEADER_SIZE, length);
  if (payload.length !== length) return { kind: 'damaged', reason: 'short read' };
  if (zlib.crc32(payload, zlib.crc32(header.subarray(0, 28))) !== header.readUInt32LE(28)) return { kind: 'damaged', reason: 'CRC mismatch' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload.toString('utf8'));
  } catch {
    return { kind: 'damaged', reason: 'payload is not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { kind: 'damaged', reason: 'payload is not an object' };
  const values = new Map<string, string>();
  for (const [k, v] of Object.entries(parsed)) {
    if (typeof v !== 'string') return { kind: 'damaged', reason: `value of ${k} is not a string` };
    values.set(k, v);
  }
  return { kind: 'valid', sequence: header.readBigUInt64LE(16), values };
}

/** Reads the store in the size bytes at offset of dev (a device, an open fd or a path). */
export function readMeta(dev: MetaDevice | number | string, offset = 0, size = META_SIZE): MetaState {
  return withDevice(dev, 'r', (d) => readState(d, offset, size));
}

/** Replaces the store's values (writing the other copy, then fsync); returns the new state. */
export function writeMeta(
  dev: MetaDevice | number | string,
  values: ReadonlyMap<string, string> | Readonly<Record<string, string>>,
  offset = 0,
  size = META_SIZE,
): MetaState {
  const map = values instanceof Map ? new Map(values) : new Map(Object.entries(values));
  return withDevice(dev, 'r+', (d) => writeState(d, readState(d, offset, size), map, offset, size));
}

/** The store as an object: values cached since the last read or write. */
export class MetaStore {
  readonly #dev: MetaDevice;
  readonly #offset: number;
  readonly #size: number;
  #state: MetaState;
  #close: (() => void) | undefined;

  /** Reads the store now; close, when given, is what close() does. */
  constructor(dev: MetaDevice, offset = 0, size = META_SIZE, close?: () => void) {
    this.#dev = dev;
    this.#offset = offset;
    this.#size = size;
    this.#close = close;
    this.#state = readState(dev, offset, size);
  }

  /** Opens a partition or image read-write; close() when done. */
  static open(path: string, offset = 0, size = META_SIZE): MetaStore {
    const fd = fs.openSync(path, 'r+');
    try {
      return new MetaStore(fdDevice(fd), offset, size, () => fs.closeSync(fd));
    } catch (err) {
      fs.closeSync(fd);
      throw err;
    }
  }

  /**
   * Opens the store at `path`, sets `entries` and removes `remove` in one write, and closes it.
   * Returns whether anything changed (nothing is written otherwise).
   */
  static update(path: string, entries: Readonly<Record<string, string>>, remove: Iterable<string> = []): boolean {
    const store = MetaStore.open(path);
    try {
      const next = store.all();
      for (const [k, v] of Object.entries(entries)) next.set(k, v);
      for (const k of remove) next.delete(k);
      return store.#writeIfChanged(next);
    } finally {
      store.close();
    }
  }

  get(key: string): string | undefined {
    return this.#state.values.get(key);
  }

  all(): Map<string, string> {
    return new Map(this.#state.values);
  }

  /** Was the store found corrupt (no valid copy) when last read? */
  get corrupt(): boolean {
    return this.#state.corrupt;
  }

  get state(): Readonly<MetaState> {
    return this.#state;
  }

  /** Sets keys and writes, unless nothing changes. */
  set(entries: ReadonlyMap<string, string> | Readonly<Record<string, string>>): void {
    const next = this.all();
    for (const [k, v] of entries instanceof Map ? entries : Object.entries(entries)) next.set(k, v);
    this.#writeIfChanged(next);
  }

  /** Removes keys and writes, unless none was there. */
  delete(keys: Iterable<string>): void {
    const next = this.all();
    for (const k of keys) next.delete(k);
    this.#writeIfChanged(next);
  }

  /** Reads the device again. */
  reload(): void {
    this.#state = readState(this.#dev, this.#offset, this.#size);
  }

  close(): void {
    this.#close?.();
    this.#close = undefined;
  }

  #writeIfChanged(next: Map<string, string>): boolean {
    const cur = this.#state.values;
    if (next.size === cur.size && [...next].every(([k, v]) => cur.get(k) === v)) return false;
    this.#state = writeState(this.#dev, this.#state, next, this.#offset, this.#size);
    return true;
  }
}

function readState(dev: MetaDevice, offset: number, size: number): MetaState {
  const copySize = checkRegion(offset, size);
  const copies = ([0, 1] as const).map((i) => decodeMetaCopy(dev, offset + i * copySize, copySize));
  let best: { copy: CopyIndex; sequence: bigint; values: Map<string, string> } | undefined;
  const damaged: CopyIndex[] = [];
  copies.forEach((c, i) => {
    const copy = i as CopyIndex;
    if (c.kind === 'damaged') damaged.push(copy);
    if (c.kind === 'valid' && (!best || c.sequence > best.sequence)) best = { copy, sequence: c.sequence, values: c.values };
  });
  if (!best) return { values: new Map(), sequence: 0n, copy: undefined, damaged, corrupt: damaged.length > 0 };
  return { ...best, damaged, corrupt: false };
}

function writeState(dev: MetaDevice, cur: MetaState, values: Map<string, string>, offset: number, size: number): MetaState {
  const copySize = checkRegion(offset, size);
  const target: CopyIndex = cur.copy === 0 ? 1 : 0;
  const sequence = cur.sequence + 1n;
  const bytes = encodeMetaCopy(values, sequence, copySize);
  dev.write(offset + target * copySize, bytes);
  dev.sync();
  return { values: new Map(values), sequence, copy: target, damaged: cur.damaged.filter((c) => c !== target), corrupt: false };
}

function checkRegion(offset: number, size: number): number {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new Error(`META: offset ${offset} is not a byte offset`);
  if (!Number.isSafeInteger(size) || size % 2 !== 0 || size / 2 <= META_HEADER_SIZE + 2) {
    throw new Error(`META: region size ${size} is not an even number of bytes above ${2 * (META_HEADER_SIZE + 2)}`);
  }
  return size / 2;
}

function withDevice<T>(dev: MetaDevice | number | string, flags: 'r' | 'r+', f: (d: MetaDevice) => T): T {
  if (typeof dev === 'number') return f(fdDevice(dev));
  if (typeof dev !== 'string') return f(dev);
  const fd = fs.openSync(dev, flags);
  try {
    return f(fdDevice(fd));
  } finally {
    fs.closeSync(fd);
  }
}
