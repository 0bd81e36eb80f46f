// A minimal DER writer: the handful of ASN.1 types an X.509 certificate is made of. Written
// here rather than taken from @peculiar/x509 (which Bronze uses everywhere else) for one reason:
// start-up. Loading that library and building one certificate with it cost machined over a
// second under QEMU/TCG, on the path of every boot to a serving API (measured; see
// self-signed.ts). Encoding only, and only what self-signed.ts needs.

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** One TLV: tag byte, definite length, contents. */
export function tlv(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

export const seq = (...items: Buffer[]) => tlv(0x30, ...items);
export const set = (...items: Buffer[]) => tlv(0x31, ...items);
export const octets = (b: Buffer) => tlv(0x04, b);
export const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
export const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
/** Context-specific, constructed ([n] EXPLICIT). */
export const explicit = (n: number, inner: Buffer) => tlv(0xa0 | n, inner);
/** Context-specific, primitive ([n] IMPLICIT of a primitive type). */
export const implicit = (n: number, contents: Buffer) => tlv(0x80 | n, contents);
/** A BIT STRING whose bytes are all used (no unused bits). */
export const bits = (b: Buffer, unused = 0) => tlv(0x03, Buffer.from([unused]), b);

/** A non-negative INTEGER from its big-endian magnitude. */
export function uint(magnitude: Buffer): Buffer {
  let i = 0;
  while (i < magnitude.length - 1 && magnitude[i] === 0) i++;
  const m = magnitude.subarray(i);
  return tlv(0x02, m[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), m]) : m);
}

export function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  if (parts.length < 2 || parts.some((p) => !Number.isSafeInteger(p) || p < 0)) throw new Error(`invalid OID ${dotted}`);
  const out = [parts[0]! * 40 + parts[1]!];
  for (const p of parts.slice(2)) {
    const chunk: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 4.1.2.5), to the second. */
export function time(d: Date): Buffer {
  const iso = d.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '');
  const year = d.getUTCFullYear();
  return year < 2050 && year >= 1950 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${digits}Z`));
}
