// Gives the C heap's free memory back to the kernel: glibc's malloc_trim(0) returns the free
// pages of every arena (madvise MADV_DONTNEED), where free() only ever shortens the main arena's
// top. A role's start-up leaves megabytes of them behind (Node's and OpenSSL's buffers while
// the bundle, its code cache and the first TLS contexts load), which the process would
// otherwise keep for as long as it runs: PSS at idle, on a node that may have 512 MiB in all.
// Node has no call for it: koffi makes it (loaded at start by the roles that make syscalls,
// NATIVE_ROLES, and for this alone by the others, src/role-entry.ts); once when start-up has
// settled, then now and then, since long operations (an upgrade's image, a
// burst of API calls) leave the same behind. A trim costs milliseconds.
//
// Before each trim, V8 gives back what its heap holds and does not use: a last-resort garbage
// collection (V8's own, as under memory pressure: full collections until nothing more is freed,
// then its pooled and surplus pages released). A process's V8 heap keeps the pages its busiest
// moment needed (start-up, a burst of calls) committed for as long as it runs; on the host, a
// daemon's bundle loaded and then used left 11.5 MiB committed for 8.2 MiB in use, and its
// anonymous memory went from 32.6 to 16.0 MiB with such a collection (a plain one freed nothing).
// It frees the ArrayBuffers the C heap holds too, so the trim after it gives more back.
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Koffi } from './native.ts';

/** When the first trim comes after a role starts, and how often after that. */
export const TRIM_SCHEDULE = { firstMs: 15_000, everyMs: 5 * 60_000 } as const;

const trims = new WeakMap<Koffi, (pad: number) => number>();

/** malloc_trim(0): true when it gave memory back. */
export function mallocTrim(k: Koffi): boolean {
  let trim = trims.get(k);
  if (!trim) trims.set(k, (trim = k.load('libc.so.6').func('int malloc_trim(size_t pad)') as (pad: number) => number));
  return trim(0) === 1;
}

type GcOptions = { type: 'major'; execution: 'sync'; flavor: 'last-resort' };
let gcFunction: ((o: GcOptions) => void) | undefined;

/**
 * V8's last-resort collection (what V8 does under memory pressure), through the gc extension:
 * turned on for this process when first needed (a flag set after a code cache was checked does
 * not affect it). Errors are the caller's to report.
 */
export function collectAllGarbage(): void {
  if (!gcFunction) {
    v8.setFlagsFromString('--expose-gc');
    gcFunction = vm.runInNewContext('gc') as (o: GcOptions) => void;
  }
  gcFunction({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/** What each scheduled trim does: V8 first, then the C heap. */
export function releaseMemory(k: Koffi): boolean {
  try {
    collectAllGarbage();
  } catch (err) {
    process.stderr.write(`bronze: V8's last-resort collection: ${(err as Error).message}\n`);
  }
  return mallocTrim(k);
}

/** Trims on TRIM_SCHEDULE (or `schedule`) until the returned function is called; the timers keep no process alive. */
export function trimWhileRunning(k: Koffi, schedule: { firstMs: number; everyMs: number } = TRIM_SCHEDULE, release: (k: Koffi) => unknown = releaseMemory): () => void {
  let every: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    release(k);
    every = setInterval(() => release(k), schedule.everyMs);
    every.unref();
  }, schedule.firstMs);
  first.unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}
