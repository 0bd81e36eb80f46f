// Sizes as go-humanize reads them and CPU limits in millicores, as Talos reads them.
import { describe, expect, it } from 'vitest';
import { parseHumanBytes, parseMillicores } from './quantities.ts';

describe('quantities', () => {
  it('read sizes as go-humanize ParseBytes', () => {
    const cases: Record<string, number> = { '512MiB': 512 * 1024 ** 2, '64M': 64e6, '1.5 GB': 1.5e9, '1,024 KiB': 1024 * 1024, '100': 100, '2ki': 2048, '1 Gi': 1024 ** 3, '0': 0, '3e': 3e18 };
    for (const [text, bytes] of Object.entries(cases)) expect(parseHumanBytes(text), text).toBe(bytes);
    for (const bad of ['lots', '', 'MiB', '1.2.3MiB', '5 zb', '-1']) expect(typeof parseHumanBytes(bad), bad).toBe('string');
  });

  it('take CPU limits in millicores only, as Talos does', () => {
    expect(parseMillicores('1500m')).toBe(1500);
    expect(parseMillicores('2')).toBe('limits.cpu "2" must be expressed in millicores, e.g. 1500m');
    expect(parseMillicores('0m')).toBe('limits.cpu "0m" must be greater than zero');
    expect(parseMillicores('1.5m')).toBe('limits.cpu "1.5m" is not a valid millicore quantity');
  });
});
