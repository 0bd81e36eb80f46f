import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import type { Koffi } from './native.ts';
import { trimWhileRunning } from './malloc-trim.ts';

const fixture = fileURLToPath(new URL('../../test/fixtures/malloc-trim/free-then-trim.mjs', import.meta.url));

describe('malloc_trim', () => {
  it('gives the free pages of the C heap back to the kernel (a real process, glibc, koffi)', () => {
    // The fixture is plain JavaScript: it loads this module through Node's type stripping.
    const out = execFileSync(process.execPath, ['--expose-gc', '--experimental-strip-types', '--no-warnings', fixture, fileURLToPath(new URL('./malloc-trim.ts', import.meta.url))], { encoding: 'utf8' });
    const { before, after, released } = JSON.parse(out) as { before: number; after: number; released: boolean };
    expect(released).toBe(true);
    // 60 MB were freed in 1000-byte blocks: most of it is resident until the trim.
    expect(before - after).toBeGreaterThan(30 * 1024 * 1024);
  });

  it('trims once start-up has settled and then on its interval, until stopped', () => {
    vi.useFakeTimers();
    try {
      const trim = vi.fn(() => 1);
      const k = { load: () => ({ func: () => trim }) } as unknown as Koffi;
      const stop = trimWhileRunning(k, { firstMs: 1000, everyMs: 5000 });
      vi.advanceTimersByTime(999);
      expect(trim).not.toHaveBeenCalled();
      vi.advanceTimersByTime(1);
      expect(trim).toHaveBeenCalledTimes(1);
      expect(trim).toHaveBeenCalledWith(0);
      vi.advanceTimersByTime(10_000);
      expect(trim).toHaveBeenCalledTimes(3);
      stop();
      vi.advanceTimersByTime(60_000);
      expect(trim).toHaveBeenCalledTimes(3);
    } finally {
      vi.useRealTimers();
    }
  });
});
