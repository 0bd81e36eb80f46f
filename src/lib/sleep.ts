// A timer as a promise that an abort ends early (resolving, not rejecting): the retry and poll
// loops' pause. The abort listener goes when the timer fires, so a loop that sleeps on one
// long-lived signal leaves none behind.

/** Resolves after `ms`, or at once when `signal` is (or becomes) aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
