import { describe, expect, it } from 'vitest';
import { cpuReport, cpuSeconds, mappingReport, memoryReport, parseCpuSeconds, parsePssByMapping, parsePssKiB, pssKiB } from './memstats.ts';

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

describe('PSS by mapping', () => {
  it('sums each mapping name, nameless ones as [anon], the largest first', () => {
    const smaps = [
      '00400000-00500000 r-xp 00000000 00:1e 12 /sbin/init',
      'Rss: 900 kB',
      'Pss: 150 kB',
      '00600000-00700000 r--p 00100000 00:1e 12 /sbin/init',
      'Pss: 50 kB',
      '7f0000000000-7f0000100000 rw-p 00000000 00:00 0 ',
      'Pss: 400 kB',
      '7f0000100000-7f0000200000 rw-p 00000000 00:00 0 [heap]',
      'Pss: 10 kB',
    ].join('\n');
    expect(parsePssByMapping(smaps)).toEqual([
      { name: '[anon]', kib: 400 },
      { name: '/sbin/init', kib: 200 },
      { name: '[heap]', kib: 10 },
    ]);
  });
  it('reads this process', () => {
    expect(mappingReport(process.pid, 2)).toMatch(/^\S+=\d+\.\d \S+=\d+\.\d$/);
    expect(mappingReport(-1)).toBe('?');
  });
});

describe('CPU time', () => {
  it('parses /proc/<pid>/stat after the command, whatever it holds', () => {
    const rest = 'S 1 92 92 0 -1 4194560 2870 0 0 0 137 24 0 0 20 0 11 0 1650 1005383680 9620 18446744073709551615';
    expect(parseCpuSeconds(`92 (apid) ${rest}`)).toEqual({ user: 1.37, system: 0.24 });
    expect(parseCpuSeconds(`92 (a (b) c) ${rest}`)).toEqual({ user: 1.37, system: 0.24 });
    expect(parseCpuSeconds('92 (x) S 1')).toBeUndefined();
  });
  it('reads this process and reports unknown pids as ?', () => {
    expect(cpuSeconds(process.pid)!.user).toBeGreaterThan(0);
    expect(cpuReport([{ name: 'a', pid: 1 }, { name: 'gone', pid: undefined }, { name: 'b', pid: 2 }], (pid) => ({ user: pid, system: pid / 2 }))).toBe(
      'a=1.50s(sys 0.50) gone=? b=3.00s(sys 1.00) total=4.50s(sys 1.50)',
    );
  });
});
