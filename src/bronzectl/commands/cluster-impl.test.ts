import { describe, expect, it } from 'vitest';
import { bootConcurrency } from './cluster-impl.ts';

describe('cluster create: how many nodes boot at once', () => {
  it('as many as the host has CPUs for, at least one', () => {
    expect(bootConcurrency(2, 1)).toBe(2);
    expect(bootConcurrency(2, 2)).toBe(1);
    expect(bootConcurrency(1, 4)).toBe(1);
    expect(bootConcurrency(16, 2)).toBe(8);
    expect(bootConcurrency(3, 2)).toBe(1);
  });
});
