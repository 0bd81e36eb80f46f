import { describe, expect, it } from 'vitest';
import { memoryReport, parsePssKiB, pssKiB } from './memstats.ts';

describe('PSS', () => {
  it('parses smaps_rollup', () => {
    expect(parsePssKiB('Rss:  1000 kB\nPss:   420 kB\nPss_Anon: 300 kB\n')).toBe(420);
    expect(parsePssKiB('nothing')).toBeUndefined();
  });
  it('reads this process and reports unknown pids as ?', () => {
    expect(pssKiB(process.pid)).toBeGreaterThan(1000);
    expect(memoryReport([{ name: 'self', pid: process.pid }, { name: 'gone', pid: undefined }])).toMatch(/^self=\d+\.\dMiB gone=\?$/);
  });
});
