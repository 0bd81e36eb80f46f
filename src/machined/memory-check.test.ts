import { describe, expect, it } from 'vitest';
import { MIN_MEMORY_MIB, MIN_MEMTOTAL_KIB, checkMemory, memTotalKiB } from './memory-check.ts';

const meminfo = (kib: number) => `MemTotal:       ${kib} kB\nMemFree:          100000 kB\nMemAvailable:     200000 kB\n`;

describe('checkMemory', () => {
  it('reads MemTotal', () => {
    expect(memTotalKiB(meminfo(482_000))).toBe(482_000);
    expect(memTotalKiB('MemFree: 1 kB\n')).toBeUndefined();
  });

  it('passes at the minimum and above, says nothing', () => {
    expect(checkMemory(meminfo(MIN_MEMTOTAL_KIB))).toEqual({ totalKiB: MIN_MEMTOTAL_KIB, ok: true });
    expect(checkMemory(meminfo(4 << 20)).ok).toBe(true);
  });

  it('below it, says how much there is and how much is needed', () => {
    const r = checkMemory(meminfo(230_000));
    expect(r.ok).toBe(false);
    expect(r.message).toMatch(/has 225 MiB of memory/);
    expect(r.message).toContain(`at least ${MIN_MEMORY_MIB} MiB of RAM`);
  });

  it('cannot read it: no complaint', () => {
    expect(checkMemory(undefined)).toEqual({ ok: true });
  });
});
