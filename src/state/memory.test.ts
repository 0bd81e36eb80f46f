// MemoryState: the shared State conformance suite, plus what only the in-memory one can show
// (no watcher is left behind).

import { describe, expect, it } from 'vitest';
import { stateConformance } from './testing-conformance.ts';
import { MemoryState } from './memory.ts';
import { newResource } from './resource.ts';

stateConformance('MemoryState', (opts) => new MemoryState(opts));

describe('MemoryState', () => {
  const T = 'Tests.bronze.dev';

  it('forgets watchers that were aborted, broken out of, or overflowed', async () => {
    const st = new MemoryState({ watchQueueSize: 2 });
    const ac = new AbortController();
    st.watchKind('runtime', T, { signal: ac.signal, bootstrap: true });
    st.watch('runtime', T, 'a', { signal: ac.signal });
    expect(st.watcherCount()).toBe(2);
    ac.abort();
    expect(st.watcherCount()).toBe(0);

    for await (const ev of st.watchKind('runtime', T, { signal: new AbortController().signal, bootstrap: true })) {
      expect(ev.type).toBe('bootstrapped');
      break;
    }
    expect(st.watcherCount()).toBe(0);

    st.watchKind('runtime', T, { signal: new AbortController().signal, bootstrap: false });
    for (let i = 0; i < 3; i++) await st.create(newResource('runtime', T, `r${i}`, {}), { owner: '' });
    expect(st.watcherCount()).toBe(0);
  });

  it('rejects a bad queue size', () => {
    expect(() => new MemoryState({ watchQueueSize: 0 })).toThrow(RangeError);
  });
});
