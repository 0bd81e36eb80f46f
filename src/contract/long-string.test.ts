import protobuf from 'protobufjs/light.js';
import { describe, expect, it } from 'vitest';
import { fastLongToString } from './long-string.ts';
import './protos.ts';

// The class protobufjs took (long.js's CommonJS build; its ESM build is another class).
const Long = protobuf.util.Long as unknown as typeof import('long').default;

// The text long.js's own division makes, computed with BigInt (independent of the patch).
const exact = (l: InstanceType<typeof Long>) => (l.unsigned ? BigInt.asUintN(64, (BigInt(l.high >>> 0) << 32n) | BigInt(l.low >>> 0)) : BigInt.asIntN(64, (BigInt(l.high >>> 0) << 32n) | BigInt(l.low >>> 0))).toString();

describe('fastLongToString', () => {
  it('is applied to the Long protobufjs decodes int64 fields into', () => {
    expect(Long).toBeTruthy();
    expect(Object.getOwnPropertySymbols(Long.prototype).map(String)).toContain('Symbol(bronze.fastLongToString)');
    const l = Long.fromString('1765000000');
    expect(l.toString()).toBe('1765000000');
  });

  it('gives the same decimal text as the exact value, on both sides of 2^53', () => {
    fastLongToString(Long);
    const edges = ['0', '1', '-1', '1765000000', '9007199254740991', '9007199254740992', '9007199254740993', '-9007199254740991', '-9007199254740992', '-9007199254740993', '9223372036854775807', '-9223372036854775808', '4294967295', '4294967296', '-4294967296'];
    for (const text of edges) {
      const l = Long.fromString(text);
      expect(l.toString(), text).toBe(text);
      expect(l.toString(10), text).toBe(text);
      expect(l.toString(), text).toBe(exact(l));
    }
    for (const text of ['0', '9007199254740991', '9007199254740992', '18446744073709551615', '12345678901234567890']) {
      const l = Long.fromString(text, true);
      expect(l.toString(), text).toBe(text);
      expect(l.toString(), text).toBe(exact(l));
    }
  });

  it('agrees with the exact value for random 64-bit values, signed and unsigned', () => {
    for (let i = 0; i < 20_000; i++) {
      const high = (Math.random() * 2 ** 32) | 0;
      // Half of them in the safe range, where the shortcut is taken.
      const h = i % 2 ? high : high >> 11;
      const low = (Math.random() * 2 ** 32) | 0;
      for (const unsigned of [false, true]) {
        const l = new Long(low, h, unsigned);
        expect(l.toString()).toBe(exact(l));
      }
    }
  });

  it('leaves other radixes to long.js', () => {
    expect(Long.fromString('255').toString(16)).toBe('ff');
    expect(Long.fromString('-9223372036854775808').toString(2)).toBe('-1' + '0'.repeat(63));
  });

  it('is idempotent and a no-op without long.js', () => {
    const before = Long.prototype.toString;
    fastLongToString(Long);
    expect(Long.prototype.toString).toBe(before);
    expect(() => fastLongToString(null)).not.toThrow();
  });
});
