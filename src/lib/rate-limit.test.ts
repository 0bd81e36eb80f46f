import { describe, expect, it } from 'vitest';
import { RateLimiter } from './rate-limit.ts';

describe('RateLimiter', () => {
  it('allows a burst, then one call per refill interval, per key', () => {
    let t = 0;
    const r = new RateLimiter({ burst: 3, refillMs: 1000, now: () => t });
    expect([r.take('a'), r.take('a'), r.take('a'), r.take('a')]).toEqual([true, true, true, false]);
    expect(r.take('b')).toBe(true); // another key has its own bucket
    expect(r.retryAfterMs('a')).toBe(1000);
    t += 999;
    expect(r.take('a')).toBe(false);
    t += 1;
    expect(r.take('a')).toBe(true);
    expect(r.take('a')).toBe(false);
    t += 60_000; // never more than the burst, however long it waited
    expect([r.take('a'), r.take('a'), r.take('a'), r.take('a')]).toEqual([true, true, true, false]);
  });

  it('charge counts a failure even past the limit; allows only looks', () => {
    let t = 0;
    const r = new RateLimiter({ burst: 2, refillMs: 1000, now: () => t });
    r.charge('x');
    r.charge('x');
    r.charge('x');
    expect(r.allows('x')).toBe(false);
    expect(r.allows('y')).toBe(true);
    expect(r.size).toBe(1);
    t += 1000;
    expect(r.allows('x')).toBe(true);
  });

  it('keeps at most maxKeys buckets, dropping full ones first, then the least recently used', () => {
    let t = 0;
    const r = new RateLimiter({ burst: 2, refillMs: 1000, maxKeys: 100, now: () => t });
    for (let i = 0; i < 1000; i++) r.take(`k${i}`);
    expect(r.size).toBe(100);
    // A spent key outlives older keys that have refilled since (they are the same as none).
    const s = new RateLimiter({ burst: 1, refillMs: 1000, maxKeys: 3, now: () => t });
    s.take('a');
    s.take('b');
    t += 1000;
    s.take('spent');
    s.take('c');
    expect(s.size).toBe(3);
    expect(s.take('spent')).toBe(false);
  });

  it('refuses a meaningless configuration', () => {
    expect(() => new RateLimiter({ burst: 0, refillMs: 1 })).toThrow(/burst >= 1/);
    expect(() => new RateLimiter({ burst: 1, refillMs: 0 })).toThrow(/refillMs > 0/);
  });
});
