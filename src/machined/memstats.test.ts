import { describe, expect, it } from 'vitest';
import { memoryReport, parsePssKiB, pssKiB } from './memstats.ts';

describe('PSS', () => {
  it('parses smaps_rollup', () => {
    expect(parsePssKiB('Rss:  1000 kB\nPss:   420 kB\nPss_Anon: 300 kB\n')).toBe(420);
    expect(parsePssKiB('nothing')).toBeUndefined();
  });
  it('reads this process and reports unknown pids as ?', () => {
    expect(pssKiB(process.pid)).toBeGreaterThan(1000);
    expect(memoryReport([{ name: 'self', pid: process.pid }, { name: 'gone', pid: undefined }])).toMatch(/^self=\d+\.\dMiB gone=\? total=\d+\.\dMiB$/);
    expect(memoryReport([{ name: 'a', pid: 1 }, { name: 'b', pid: 2 }], (pid) => pid * 1024)).toBe('a=1.0MiB b=2.0MiB total=3.0MiB');
  });
});
