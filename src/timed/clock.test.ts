import { beforeAll, describe, expect, it } from 'vitest';
import { initNative } from '../lib/native.ts';
import { ClockNotAdjustableError, RealClock, SimulatedClock, decideCorrection, pllTimeConstant } from './clock.ts';

describe('decideCorrection', () => {
  it('steps at or above 128 ms and slews below', () => {
    expect(decideCorrection(5000, false).action).toBe('step');
    expect(decideCorrection(-128, false).action).toBe('step');
    expect(decideCorrection(127.9, false).action).toBe('slew');
    expect(decideCorrection(-20, false)).toEqual({ action: 'slew', offsetMs: -20 });
  });

  it('steps on the first sync unless the offset is under a millisecond', () => {
    expect(decideCorrection(20, true).action).toBe('step');
    expect(decideCorrection(0.4, true).action).toBe('slew');
    expect(decideCorrection(20, true, { firstStepThresholdMs: 128 }).action).toBe('slew');
    expect(decideCorrection(60, false, { stepThresholdMs: 50 }).action).toBe('step');
  });

  it('maps poll intervals to PLL time constants', () => {
    expect(pllTimeConstant(64_000)).toBe(2);
    expect(pllTimeConstant(1_024_000)).toBe(6);
    expect(pllTimeConstant(500)).toBe(0);
  });
});

describe('SimulatedClock', () => {
  it('starts at its base plus the offset and steps at once', () => {
    let base = 1_000_000;
    const c = new SimulatedClock({ offsetMs: 5000, base: () => base });
    expect(c.now()).toBe(1_005_000);
    c.step(-5000);
    expect(c.now()).toBe(1_000_000);
    base += 10;
    expect(c.now()).toBe(1_000_010);
    expect(c.events).toEqual([{ kind: 'step', deltaMs: -5000, at: 1_000_000 }]);
  });

  it('slews at 500 ppm and a new slew replaces what is left of the old one', () => {
    let base = 0;
    const c = new SimulatedClock({ offsetMs: 20, base: () => base });
    c.slew(-20, 64_000);
    base = 10_000; // 10 s at 500 ppm = 5 ms
    expect(c.errorMs).toBeCloseTo(15, 9);
    expect(c.pendingSlewMs).toBeCloseTo(-15, 9);
    base = 100_000; // done after 40 s
    expect(c.errorMs).toBeCloseTo(0, 9);
    c.slew(4, 64_000);
    c.slew(-2, 64_000);
    base = 200_000;
    expect(c.errorMs).toBeCloseTo(-2, 9);
  });

  it('can apply a slew at once, and jump without recording a correction', () => {
    const c = new SimulatedClock({ slewPpm: Number.POSITIVE_INFINITY, base: () => 0 });
    c.slew(3, 1000);
    expect(c.now()).toBe(3);
    c.jump(100);
    expect(c.now()).toBe(103);
    expect(c.events.map((e) => e.kind)).toEqual(['slew']);
  });

  it('follows the real time by default', () => {
    const c = new SimulatedClock();
    expect(Math.abs(c.now() - Date.now())).toBeLessThan(50);
  });
});

describe('RealClock (read-only: the host clock is never changed here)', () => {
  beforeAll(async () => {
    await initNative();
  });

  it('reads CLOCK_REALTIME with sub-millisecond precision', () => {
    const c = new RealClock({ adjust: false });
    const a = c.now();
    expect(Math.abs(a - Date.now())).toBeLessThan(50);
    const values = new Set(Array.from({ length: 20 }, () => c.now() % 1));
    expect(values.size).toBeGreaterThan(1);
  });

  it('reads the kernel discipline state with a mode-less adjtimex', () => {
    const s = new RealClock({ adjust: false }).kernelStatus();
    expect(s.state).toBeGreaterThanOrEqual(0);
    expect(s.state).toBeLessThanOrEqual(5);
    expect(typeof s.synced).toBe('boolean');
    expect(s.maxErrorUs).toBeGreaterThanOrEqual(0);
  });

  it('refuses to step or slew unless built to adjust', () => {
    const c = new RealClock({ adjust: false });
    expect(c.canAdjust).toBe(false);
    expect(() => c.step(1)).toThrow(ClockNotAdjustableError);
    expect(() => c.slew(1, 64_000)).toThrow(ClockNotAdjustableError);
  });
});
