// The NTP packet (RFC 5905 section 7.3) as an SNTP client (RFC 4330) needs it: the 48-byte
// header, NTP timestamps with era handling, and the offset/delay arithmetic.
//
// Written by hand: the format is 48 fixed bytes, and the npm NTP packages are either
// unmaintained, do their own sockets and clock reads (so no injectable clock, no nonce), or
// lose the fraction's precision. Extension fields and a MAC after the header are ignored.

/** Seconds from the NTP prime epoch (1900-01-01) to the Unix epoch (1970-01-01). */
export const NTP_UNIX_OFFSET_S = 2_208_988_800;
export const NTP_PACKET_SIZE = 48;
export const NTP_PORT = 123;
const ERA_S = 2 ** 32;
const FRAC = 2 ** 32;

export const Mode = {
  RESERVED: 0,
  SYMMETRIC_ACTIVE: 1,
  SYMMETRIC_PASSIVE: 2,
  CLIENT: 3,
  SERVER: 4,
  BROADCAST: 5,
  CONTROL: 6,
  PRIVATE: 7,
} as const;

/** Leap indicator: 3 means the server's clock is not synchronised. */
export const Leap = { NONE: 0, ADD: 1, DEL: 2, UNSYNC: 3 } as const;

/** A 64-bit NTP timestamp: seconds since the start of its era and a 2^-32 s fraction. */
export interface NtpTimestamp {
  /** uint32 */
  seconds: number;
  /** uint32 */
  fraction: number;
}

export const ZERO_TIMESTAMP: NtpTimestamp = Object.freeze({ seconds: 0, fraction: 0 });

export interface NtpPacket {
  /** 0..3 */
  leap: number;
  /** 0..7 */
  version: number;
  /** 0..7 */
  mode: number;
  /** 0 is kiss-o'-death, 1 primary, 2..15 secondary, 16 unsynchronised. */
  stratum: number;
  /** log2 seconds, int8 */
  poll: number;
  /** log2 seconds, int8 */
  precision: number;
  /** Seconds (NTP short format, 16.16). */
  rootDelay: number;
  /** Seconds (NTP short format, 16.16). */
  rootDispersion: number;
  /** uint32: an IPv4 address, a reference clock's or a kiss code's four ASCII letters, or an IPv6 hash. */
  referenceId: number;
  referenceTime: NtpTimestamp;
  originTime: NtpTimestamp;
  receiveTime: NtpTimestamp;
  transmitTime: NtpTimestamp;
}

export class NtpDecodeError extends Error {
  override name = 'NtpDecodeError';
}

export function isZero(t: NtpTimestamp): boolean {
  return t.seconds === 0 && t.fraction === 0;
}

export function timestampEquals(a: NtpTimestamp, b: NtpTimestamp): boolean {
  return a.seconds === b.seconds && a.fraction === b.fraction;
}

/** Unix milliseconds (fractional allowed) → NTP timestamp; times after 2036-02-07 wrap into era 1. */
export function unixMsToNtp(ms: number): NtpTimestamp {
  if (!Number.isFinite(ms)) throw new RangeError(`not a time: ${ms}`);
  const totalS = Math.floor(ms / 1000);
  let fraction = Math.round(((ms - totalS * 1000) / 1000) * FRAC);
  let s = totalS;
  if (fraction >= FRAC) {
    fraction -= FRAC;
    s += 1;
  }
  const seconds = (((s + NTP_UNIX_OFFSET_S) % ERA_S) + ERA_S) % ERA_S;
  return { seconds, fraction };
}

/**
 * NTP timestamp → Unix milliseconds. The era is not on the wire: with a pivot (a Unix ms time
 * known to be within 68 years of the answer) the era nearest the pivot is chosen; without one,
 * RFC 4330 section 3's rule: the top bit set means era 0 (1968..2036), clear means era 1
 * (2036..2104), which needs no trust in the local clock (it may read 1970 at boot).
 */
export function ntpToUnixMs(t: NtpTimestamp, pivotMs?: number): number {
  const fracMs = (t.fraction / FRAC) * 1000;
  if (pivotMs === undefined) {
    const eraS = t.seconds >= 0x8000_0000 ? 0 : ERA_S;
    return (t.seconds + eraS - NTP_UNIX_OFFSET_S) * 1000 + fracMs;
  }
  const pivotNtpS = Math.floor(pivotMs / 1000) + NTP_UNIX_OFFSET_S;
  const pivotEra = Math.floor(pivotNtpS / ERA_S);
  let best = Number.NaN;
  for (const era of [pivotEra - 1, pivotEra, pivotEra + 1]) {
    const ms = (t.seconds + era * ERA_S - NTP_UNIX_OFFSET_S) * 1000 + fracMs;
    if (Number.isNaN(best) || Math.abs(ms - pivotMs) < Math.abs(best - pivotMs)) best = ms;
  }
  return best;
}

/** Seconds → NTP short format (unsigned 16.16), saturating. */
function toShort(seconds: number): number {
  const v = Math.round(seconds * 65536);
  return Math.min(Math.max(v, 0), 0xffff_ffff);
}

function int8(v: number): number {
  return Math.min(Math.max(Math.trunc(v), -128), 127);
}

function checkField(name: string, v: number, max: number): void {
  if (!Number.isInteger(v) || v < 0 || v > max) throw new RangeError(`NTP ${name} out of range: ${v}`);
}

export function encodePacket(p: NtpPacket): Buffer {
  checkField('leap', p.leap, 3);
  checkField('version', p.version, 7);
  checkField('mode', p.mode, 7);
  checkField('stratum', p.stratum, 255);
  const b = Buffer.alloc(NTP_PACKET_SIZE);
  b.writeUInt8((p.leap << 6) | (p.version << 3) | p.mode, 0);
  b.writeUInt8(p.stratum, 1);
  b.writeInt8(int8(p.poll), 2);
  b.writeInt8(int8(p.precision), 3);
  b.writeUInt32BE(toShort(p.rootDelay), 4);
  b.writeUInt32BE(toShort(p.rootDispersion), 8);
  b.writeUInt32BE(p.referenceId >>> 0, 12);
  const ts = [p.referenceTime, p.originTime, p.receiveTime, p.transmitTime];
  ts.forEach((t, i) => {
    checkField('timestamp seconds', t.seconds, 0xffff_ffff);
    checkField('timestamp fraction', t.fraction, 0xffff_ffff);
    b.writeUInt32BE(t.seconds, 16 + i * 8);
    b.writeUInt32BE(t.fraction, 20 + i * 8);
  });
  return b;
}

/** Decodes the header; anything after the first 48 bytes (extensions, MAC) is ignored. */
export function decodePacket(b: Uint8Array): NtpPacket {
  if (b.length < NTP_PACKET_SIZE) throw new NtpDecodeError(`NTP packet too short: ${b.length} bytes, want at least ${NTP_PACKET_SIZE}`);
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const first = v.getUint8(0);
  const ts = (off: number): NtpTimestamp => ({ seconds: v.getUint32(off), fraction: v.getUint32(off + 4) });
  return {
    leap: first >> 6,
    version: (first >> 3) & 7,
    mode: first & 7,
    stratum: v.getUint8(1),
    poll: v.getInt8(2),
    precision: v.getInt8(3),
    rootDelay: v.getUint32(4) / 65536,
    rootDispersion: v.getUint32(8) / 65536,
    referenceId: v.getUint32(12),
    referenceTime: ts(16),
    originTime: ts(24),
    receiveTime: ts(32),
    transmitTime: ts(40),
  };
}

/** A client request (mode 3, version 4) whose transmit timestamp is `nonce` (RFC 4330 allows any value there). */
export function clientRequest(nonce: NtpTimestamp): Buffer {
  return encodePacket({
    leap: Leap.NONE,
    version: 4,
    mode: Mode.CLIENT,
    stratum: 0,
    poll: 0,
    precision: 0,
    rootDelay: 0,
    rootDispersion: 0,
    referenceId: 0,
    referenceTime: ZERO_TIMESTAMP,
    originTime: ZERO_TIMESTAMP,
    receiveTime: ZERO_TIMESTAMP,
    transmitTime: nonce,
  });
}

/** The kiss code of a stratum-0 packet: the reference id as four ASCII letters ('RATE', 'DENY', ...). */
export function kissCode(referenceId: number): string {
  let s = '';
  for (let shift = 24; shift >= 0; shift -= 8) {
    const c = (referenceId >>> shift) & 0xff;
    if (c === 0) break;
    s += c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : '?';
  }
  return s;
}

export function asciiRefId(code: string): number {
  let v = 0;
  for (let i = 0; i < 4; i++) v = (v << 8) | (code.charCodeAt(i) & 0xff || 0);
  return v >>> 0;
}

/**
 * Clock offset and round-trip delay (RFC 5905 section 8) from the four times, in Unix ms:
 * t1 client transmit, t2 server receive, t3 server transmit, t4 client receive.
 * offset > 0 means the local clock is behind the server's.
 */
export function offsetAndDelay(t1: number, t2: number, t3: number, t4: number): { offsetMs: number; delayMs: number } {
  return { offsetMs: (t2 - t1 + (t3 - t4)) / 2, delayMs: t4 - t1 - (t3 - t2) };
}
