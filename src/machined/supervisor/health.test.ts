// The timing of health checks (pure); the checks themselves are tested against real processes
// in supervisor.test.ts.

import { describe, expect, it } from 'vitest';
import { healthTiming } from './health.ts';

describe('health checks', () => {
  it('healthTiming: interval and timeout double with each failure in a row, up to their caps', () => {
    const t = healthTiming(2000, { backoffMax: 30_000, timeoutMax: 10_000 });
    expect([0, 1, 2, 3, 4, 5].map(t.next)).toEqual([2000, 4000, 8000, 16000, 30000, 30000]);
    expect([0, 1, 2, 3].map(t.timeout)).toEqual([2000, 4000, 8000, 10000]);
    expect(healthTiming(100, { backoffMax: 30_000, timeoutMax: 10_000 }).timeout(0)).toBe(1000);
    expect(t.startup()).toBe(200);
  });
});
