import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import type { Koffi } from './native.ts';
import { mallocTrim, trimWhileRunning } from './malloc-trim.ts';

const fixture = fileURLToPath(new URL('../../test/fixtures/malloc-trim/free-then-trim.mjs', import.meta.url));
const gcFixture = fileURLToPath(new URL('../../test/fixtures/malloc-trim/heap-then-collect.mjs', import.meta.url));

describe('malloc_trim', () => {
  it('gives the free pages of the C heap back to the kernel (a real process, glibc, koffi)', () => {
    // The fixture is plain JavaScript: it loads this module through Node's type stripping.
    const out = execFileSync(process.execPath, ['--expose-gc', '--experimental-strip-types', '--no-warnings', fixture, fileURLToPath(new URL('./malloc-trim.ts', import.meta.url))], { encoding: 'utf8' });
    const { before, after, released } = JSON.parse(out) as { before: number; after: number; released: boolean };
    expect(released).toBe(true);
    // 60 MB were freed in 1000-byte blocks: most of it is resident until the trim.
    expect(before - after).toBeGreaterThan(30 * 1024 * 1024);
  });

  it('collects V8\'s garbage as a last resort first: the heap it committed and no longer uses goes back (a real process)', () => {
    const out = execFileSync(process.execPath, ['--experimental-strip-types', '--no-warnings', gcFixture, fileURLToPath(new URL('./malloc-trim.ts', import.meta.url))], { encoding: 'utf8' });
    const { before, after } = JSON.parse(out) as { before: number; after: number };
    // 40 MB of short-lived objects grew the heap; a last-resort collection gives most of it back.
    expect(before - after).toBeGreaterThan(10 * 1024 * 1024);
  });

  it('trims once start-up has settled and then on its interval, until stopped', () => {
    vi.useFakeTimers();
    try {
      const trim = vi.fn(() => 1);
      const k = { load: () => ({ func: () => trim }) } as unknown as Koffi;
      const stop = trimWhileRunning(k, { firstMs: 1000, everyMs: 5000 }, mallocTrim);
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
