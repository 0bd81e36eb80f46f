import { describe, expect, it } from 'vitest';
import { parsedConfig, validated } from './parsed.ts';

const config = (host: string) => `apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: ${host}\n`;

describe('one validation per configuration text', () => {
  it('returns the same typed result for the same text, and validates each new text', () => {
    const a = validated(config('a'));
    expect(a.ok).toBe(true);
    expect(validated(config('a'))).toBe(a);
    expect(validated(config('b'))).not.toBe(a);
    expect(parsedConfig(config('a'))).toBe((a as { config: unknown }).config);
  });

  it('keeps only the last few', () => {
    const first = validated(config('first'));
    for (const h of ['h1', 'h2', 'h3', 'h4']) validated(config(h));
    expect(validated(config('first'))).not.toBe(first);
    expect(validated(config('first'))).toEqual(first);
  });

  it('names the errors of an invalid text', () => {
    expect(() => parsedConfig('apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: -bad-\n')).toThrow(/invalid machine configuration:\n.*hostname/s);
  });
});
