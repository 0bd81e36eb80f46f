// Reading a block device (or an image in a test) at byte offsets, and the small decoding
// helpers the partition-table and superblock parsers share.
import fs from 'node:fs/promises';

/**
 * What the parsers read through: `read` returns up to `length` bytes at `offset`, fewer (maybe
 * none) past the end, and never throws for a range past the end. Asynchronous so a slow
 * device never blocks the event loop (udevd also serves health on it).
 */
export interface Reader {
  /** Size in bytes. */
  readonly size: number;
  read(offset: number, length: number): Promise<Buffer>;
}

/** Longest single read a parser may ask for: a bound on what hostile headers can make us allocate. */
export const MAX_READ = 4 << 20;

export function bufferReader(buf: Buffer): Reader {
  return {
    size: buf.length,
    read: async (offset, length) => {
      if (!(offset >= 0) || !(length > 0) || offset >= buf.length) return Buffer.alloc(0);
      return buf.subarray(offset, Math.min(buf.length, offset + Math.min(length, MAX_READ)));
    },
  };
}

/** Opens a device node or image read-only; close() when done. Caches nothing. */
export async function openReader(file: string, size?: number): Promise<Reader & { close(): Promise<void> }> {
  const fh = await fs.open(file, 'r');
  try {
    const total = size ?? (await deviceSize(fh, file));
    return {
      size: total,
      read: async (offset, length) => {
        if (!(offset >= 0) || !(length > 0) || offset >= total) return Buffer.alloc(0);
        const n = Math.min(length, MAX_READ, total - offset);
        const buf = Buffer.alloc(n);
        let got = 0;
        while (got < n) {
          const { bytesRead } = await fh.read(buf, got, n - got, offset + got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        return buf.subarray(0, got);
      },
      close: () => fh.close(),
    };
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/** A regular file's size; for a block device (st_size 0) the caller passes the sysfs size. */
async function deviceSize(fh: fs.FileHandle, file: string): Promise<number> {
  const st = await fh.stat();
  if (st.isFile()) return st.size;
  throw new Error(`${file}: size unknown (not a regular file; pass the size from sysfs)`);
}

// ---------------------------------------------------------------------------------------------
// Decoding.

/** u64 little-endian as a number, or undefined when it is not a safe integer. */
export function u64le(buf: Buffer, off: number): number | undefined {
  if (off + 8 > buf.length) return undefined;
  const v = buf.readBigUInt64LE(off);
  return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : undefined;
}

/** A GUID as stored by EFI and Microsoft: three little-endian fields, then eight bytes as they are. */
export function guidLE(buf: Buffer, off: number): string {
  const b = buf.subarray(off, off + 16);
  const h = (i: number) => b[i]!.toString(16).padStart(2, '0');
  return (
    h(3) + h(2) + h(1) + h(0) + '-' + h(5) + h(4) + '-' + h(7) + h(6) + '-' + h(8) + h(9) + '-' +
    h(10) + h(11) + h(12) + h(13) + h(14) + h(15)
  );
}

/** A UUID stored big-endian (RFC 4122 byte order: ext4, xfs). */
export function uuidBE(buf: Buffer, off: number): string {
  const hex = buf.subarray(off, off + 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function isZero(buf: Buffer): boolean {
  for (const b of buf) if (b !== 0) return false;
  return true;
}

/** Bytes up to the first NUL, as UTF-8, trailing white space removed (as blkid sets labels). */
export function cString(buf: Buffer): string {
  const end = buf.indexOf(0);
  return trimEnd(buf.subarray(0, end < 0 ? buf.length : end).toString('utf8'));
}

/** UTF-16 (little- or big-endian) up to the first NUL code unit. */
export function utf16(buf: Buffer, bigEndian: boolean): string {
  let units = buf.subarray(0, buf.length & ~1);
  if (bigEndian) {
    const swapped = Buffer.from(units);
    swapped.swap16();
    units = swapped;
  }
  let end = units.length;
  for (let i = 0; i + 1 < units.length; i += 2) {
    if (units[i] === 0 && units[i + 1] === 0) {
      end = i;
      break;
    }
  }
  return units.subarray(0, end).toString('utf16le');
}

export function trimEnd(s: string): string {
  return s.replace(/[\s\0]+$/u, '');
}

export function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}
