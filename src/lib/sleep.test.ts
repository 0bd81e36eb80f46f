import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { sleep } from './sleep.ts';

describe('sleep', () => {
  it('resolves after the time, leaving no abort listener behind', async () => {
    const ac = new AbortController();
    const t0 = Date.now();
    for (let i = 0; i < 3; i++) await sleep(5, ac.signal);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(10);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('resolves at once on an abort, before or during the wait', async () => {
    const ac = new AbortController();
    const t0 = Date.now();
    const p = sleep(60_000, ac.signal);
    ac.abort();
    await p;
    await sleep(60_000, ac.signal);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });
});
