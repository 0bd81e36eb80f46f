import { describe, expect, it } from 'vitest';
import { goDurationMs } from './duration.ts';

describe('Go durations', () => {
  it('read every unit Go writes, the micro sign and the Greek mu alike', () => {
    expect(goDurationMs('2m30s')).toBe(150_000);
    expect(goDurationMs('-1.5h')).toBe(-5_400_000);
    expect(goDurationMs('1500us')).toBe(1.5);
    expect(goDurationMs('1500\u00b5s')).toBe(1.5);
    expect(goDurationMs('1500\u03bcs')).toBe(1.5);
    expect(goDurationMs('0')).toBe(0);
    expect(goDurationMs('5 s')).toBeUndefined();
    expect(goDurationMs('1500xs')).toBeUndefined();
  });
});
