// Gives the C heap's free memory back to the kernel: glibc's malloc_trim(0) returns the free
// pages of every arena (madvise MADV_DONTNEED), where free() only ever shortens the main arena's
// top. A role's start-up leaves megabytes of them behind (Node's and OpenSSL's buffers while
// the bundle, its code cache and the first TLS contexts load), which the process would
// otherwise keep for as long as it runs: PSS at idle, on a node that may have 512 MiB in all.
// Node has no call for it: koffi makes it (loaded at start by the roles that make syscalls,
// NATIVE_ROLES, and for this alone by the others, src/role-entry.ts); once when start-up has
// settled, then now and then, since long operations (an upgrade's image, a
// burst of API calls) leave the same behind. A trim costs milliseconds.
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

/** Trims on TRIM_SCHEDULE (or `schedule`) until the returned function is called; the timers keep no process alive. */
export function trimWhileRunning(k: Koffi, schedule: { firstMs: number; everyMs: number } = TRIM_SCHEDULE): () => void {
  let every: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    mallocTrim(k);
    every = setInterval(() => mallocTrim(k), schedule.everyMs);
    every.unref();
  }, schedule.firstMs);
  first.unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}
