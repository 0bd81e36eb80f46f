import { describe, expect, it } from 'vitest';
import { profileRequest, topSelfTime } from './boot-profile.ts';

describe('boot profile', () => {
  it('reads the roles and the seconds from the kernel command line', () => {
    expect(profileRequest('console=ttyS0 bronze.profile=machined,apid bronze.profile.seconds=30 quiet')).toEqual({ roles: ['machined', 'apid'], seconds: 30 });
    expect(profileRequest('console=ttyS0')).toEqual({ roles: [], seconds: 60 });
    expect(profileRequest('bronze.profile=udevd bronze.profile.seconds=x')).toEqual({ roles: ['udevd'], seconds: 60 });
    expect(profileRequest('bronze.profile=apid bronze.profile.window=9-10.5')).toEqual({ roles: ['apid'], seconds: 60, window: { from: 9, to: 10.5 } });
    // A window that is not two increasing numbers is no window: the whole profile counts.
    for (const w of ['10-9', '9', 'x-10', '9-10s']) expect(profileRequest(`bronze.profile=apid bronze.profile.window=${w}`)).toEqual({ roles: ['apid'], seconds: 60 });
  });

  it('counts only the samples in the window, by their CLOCK_MONOTONIC stamps', () => {
    const frame = (functionName: string) => ({ functionName, url: '/x/apid.cjs', lineNumber: 0, columnNumber: 0 });
    const profile = {
      nodes: [
        { id: 1, callFrame: frame('(root)'), children: [2, 3] },
        { id: 2, callFrame: frame('early') },
        { id: 3, callFrame: frame('late') },
      ],
      // Started 9 s after the kernel; samples at 9.0, 9.5, 10.0 and 10.5 s.
      startTime: 9_000_000,
      endTime: 11_000_000,
      samples: [2, 2, 3, 3],
      timeDeltas: [0, 500_000, 500_000, 500_000],
    };
    const lines = topSelfTime(profile, 25, { from: 9.9, to: 11 });
    expect(lines[0]).toBe('profile: 500 ms sampled from 9.9 to 11 s since the kernel started; self time per function (<- its heaviest callers):');
    expect(lines.slice(1)).toEqual(['profile:     500 ms  late apid.cjs:1:1  <- (root) apid.cjs:1:1']);
  });

  it('adds up self time per function, most first', () => {
    const frame = (functionName: string, lineNumber: number) => ({ functionName, url: '/x/machined.cjs', lineNumber, columnNumber: 4 });
    const lines = topSelfTime({
      nodes: [
        { id: 1, callFrame: frame('(root)', 0), children: [2, 3] },
        { id: 2, callFrame: frame('parse', 9) },
        { id: 3, callFrame: frame('', 19) },
      ],
      startTime: 0,
      endTime: 10_000,
      samples: [2, 2, 3, 2],
      timeDeltas: [0, 1000, 2000, 4000],
    });
    expect(lines[0]).toBe('profile: 10 ms sampled; self time per function (<- its heaviest callers):');
    // Each sample takes the delta to the next: parse 1 + 2 ms (its last sample has none), the anonymous one 4 ms.
    expect(lines.slice(1)).toEqual(['profile:       4 ms  (anonymous) machined.cjs:20:5  <- (root) machined.cjs:1:5', 'profile:       3 ms  parse machined.cjs:10:5  <- (root) machined.cjs:1:5']);
  });
});
