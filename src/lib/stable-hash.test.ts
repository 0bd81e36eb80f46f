import { describe, expect, it } from 'vitest';
import { stableHash } from './stable-hash.ts';

describe('stableHash', () => {
  it('ignores key order and undefined values, and sees every other change', () => {
    const a = stableHash({ b: [1, { y: 2, x: 1 }], a: 'v', gone: undefined });
    expect(stableHash({ a: 'v', b: [1, { x: 1, y: 2 }] })).toBe(a);
    expect(stableHash({ a: 'v', b: [{ x: 1, y: 2 }, 1] })).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });
});
