import { describe, expect, it } from 'vitest';
import {
  NTP_PACKET_SIZE,
  NTP_UNIX_OFFSET_S,
  NtpDecodeError,
  type NtpPacket,
  asciiRefId,
  clientRequest,
  decodePacket,
  encodePacket,
  kissCode,
  ntpToUnixMs,
  offsetAndDelay,
  unixMsToNtp,
} from './ntp.ts';

const ERA1_START_MS = (2 ** 32 - NTP_UNIX_OFFSET_S) * 1000; // 2036-02-07T06:28:16Z

describe('NTP timestamps', () => {
  it('maps the Unix epoch and fractions', () => {
    expect(unixMsToNtp(0)).toEqual({ seconds: 0x83aa7e80, fraction: 0 });
    expect(unixMsToNtp(500)).toEqual({ seconds: 0x83aa7e80, fraction: 0x8000_0000 });
    expect(unixMsToNtp(-1000)).toEqual({ seconds: 0x83aa7e7f, fraction: 0 });
    expect(ntpToUnixMs({ seconds: 0x83aa7e80, fraction: 0x4000_0000 })).toBe(250);
  });

  it('round-trips with sub-microsecond precision', () => {
    for (const ms of [1_700_000_000_123.456, 1_795_297_648_595.0125, 946_684_800_000, ERA1_START_MS - 0.001, ERA1_START_MS + 12_345.678]) {
      expect(Math.abs(ntpToUnixMs(unixMsToNtp(ms)) - ms)).toBeLessThan(0.001);
    }
  });

  it('rounds a fraction of exactly one second into the next second', () => {
    const t = unixMsToNtp(999.99999999999);
    expect(t.fraction).toBeLessThan(2 ** 32);
    expect(Math.abs(ntpToUnixMs(t) - 1000)).toBeLessThan(1e-6);
  });

  it('wraps into era 1 in 2036 and reads it back with RFC 4330 rule', () => {
    expect(new Date(ERA1_START_MS).toISOString()).toBe('2036-02-07T06:28:16.000Z');
    expect(unixMsToNtp(ERA1_START_MS)).toEqual({ seconds: 0, fraction: 0 });
    expect(unixMsToNtp(ERA1_START_MS + 1000)).toEqual({ seconds: 1, fraction: 0 });
    // top bit clear → era 1 (2036..2104); set → era 0 (1968..2036)
    expect(ntpToUnixMs({ seconds: 1, fraction: 0 })).toBe(ERA1_START_MS + 1000);
    expect(new Date(ntpToUnixMs({ seconds: 0x8000_0000, fraction: 0 })).toISOString()).toBe('1968-01-20T03:14:08.000Z');
    expect(new Date(ntpToUnixMs({ seconds: 0x7fff_ffff, fraction: 0 })).toISOString()).toBe('2104-02-26T09:42:23.000Z');
  });

  it('chooses the era nearest a pivot when given one', () => {
    const t = unixMsToNtp(ERA1_START_MS + 5000);
    expect(ntpToUnixMs(t, ERA1_START_MS - 60_000)).toBe(ERA1_START_MS + 5000);
    const before = unixMsToNtp(ERA1_START_MS - 5000);
    expect(ntpToUnixMs(before, ERA1_START_MS + 60_000)).toBe(ERA1_START_MS - 5000);
    // a pivot in era 1 puts seconds 0x80000000 into era 1 as well (2172), the MSB rule would not
    const far = ntpToUnixMs({ seconds: 0x8000_0000, fraction: 0 }, ERA1_START_MS + 2 ** 31 * 1000);
    expect(far).toBe(ERA1_START_MS + 2 ** 31 * 1000);
  });

  it('refuses to encode a non-time', () => {
    expect(() => unixMsToNtp(Number.NaN)).toThrow(RangeError);
  });
});

describe('NTP packets', () => {
  const sample: NtpPacket = {
    leap: 0,
    version: 4,
    mode: 4,
    stratum: 2,
    poll: 6,
    precision: -20,
    rootDelay: 1,
    rootDispersion: 0.5,
    referenceId: 0x0a000001,
    referenceTime: { seconds: 0xe000_0000, fraction: 1 },
    originTime: { seconds: 0x1234_5678, fraction: 0x9abc_def0 },
    receiveTime: { seconds: 0xe000_0001, fraction: 0x8000_0000 },
    transmitTime: { seconds: 0xe000_0001, fraction: 0xc000_0000 },
  };

  it('encodes the header bit by bit', () => {
    const b = encodePacket(sample);
    expect(b.length).toBe(NTP_PACKET_SIZE);
    expect(b.subarray(0, 16).toString('hex')).toBe('240206ec' + '00010000' + '00008000' + '0a000001');
    expect(b.subarray(24, 32).toString('hex')).toBe('123456789abcdef0');
    expect(b.subarray(40, 48).toString('hex')).toBe('e0000001c0000000');
  });

  it('decodes what it encodes, ignoring trailing extension fields', () => {
    const b = Buffer.concat([encodePacket(sample), Buffer.alloc(20, 0xff)]);
    expect(decodePacket(b)).toEqual(sample);
    expect(decodePacket(new Uint8Array(b.buffer, b.byteOffset, b.length))).toEqual(sample);
  });

  it('decodes leap 3 and mode 5 and a signed poll', () => {
    const b = encodePacket({ ...sample, leap: 3, mode: 5, poll: -3 });
    const p = decodePacket(b);
    expect([p.leap, p.mode, p.poll]).toEqual([3, 5, -3]);
  });

  it('rejects short packets', () => {
    expect(() => decodePacket(Buffer.alloc(47))).toThrow(NtpDecodeError);
    expect(() => decodePacket(Buffer.alloc(0))).toThrow(/too short/);
  });

  it('rejects fields out of range when encoding', () => {
    expect(() => encodePacket({ ...sample, leap: 4 })).toThrow(RangeError);
    expect(() => encodePacket({ ...sample, transmitTime: { seconds: 2 ** 32, fraction: 0 } })).toThrow(RangeError);
  });

  it('makes a client request: mode 3, version 4, the nonce as transmit time, all else zero', () => {
    const b = clientRequest({ seconds: 0xdead_beef, fraction: 0x0bad_f00d });
    expect(b[0]).toBe(0x23);
    expect(b.subarray(1, 40).every((x) => x === 0)).toBe(true);
    expect(b.subarray(40).toString('hex')).toBe('deadbeef0badf00d');
  });

  it('reads kiss codes', () => {
    expect(kissCode(asciiRefId('RATE'))).toBe('RATE');
    expect(kissCode(asciiRefId('DENY'))).toBe('DENY');
    expect(kissCode(0x41420000)).toBe('AB');
    expect(kissCode(0x01414243)).toBe('?ABC');
  });
});

describe('offset and delay', () => {
  it('follows RFC 5905: offset ((t2-t1)+(t3-t4))/2, delay (t4-t1)-(t3-t2)', () => {
    // client 1 s behind, 20 ms each way, 5 ms in the server
    expect(offsetAndDelay(10_000, 11_020, 11_025, 10_045)).toEqual({ offsetMs: 1000, delayMs: 40 });
    // asymmetric paths show up as half their difference
    expect(offsetAndDelay(0, 30, 30, 40)).toEqual({ offsetMs: 10, delayMs: 40 });
  });
});
