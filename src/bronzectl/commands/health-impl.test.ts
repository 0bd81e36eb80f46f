import { describe, expect, it } from 'vitest';
import { parseWait } from './health-impl.ts';

describe('parseWait', () => {
  it("reads talosctl's durations", () => {
    expect(parseWait('20m')).toBe(1_200_000);
    expect(parseWait('90s')).toBe(90_000);
    expect(parseWait('1m30s')).toBe(90_000);
    expect(parseWait('1h')).toBe(3_600_000);
    expect(parseWait('500ms')).toBe(500);
  });
  it('names a bad value', () => {
    for (const bad of ['', '10', 'soon', '5m extra', '-1s']) expect(() => parseWait(bad), bad).toThrow(/--wait-timeout .*: expected a duration such as 30s, 5m or 1h/);
  });
});
