import { describe, expect, it } from 'vitest';
import { prettySize } from './disk.ts';

describe('prettySize', () => {
  it.each([
    [0, '0 B'],
    [9, '9 B'],
    [512, '512 B'],
    [1536, '1.5 kB'],
    [67108864, '67 MB'],
    [8388608, '8.4 MB'],
    [10737418240, '11 GB'],
    [1000204886016, '1.0 TB'],
  ])('%d → %s', (n, s) => expect(prettySize(n)).toBe(s));
});
