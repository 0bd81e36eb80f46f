import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { OPTIMIZING_FROM, ROLE_MODULES } from '../roles.ts';
import { CODE_CACHE_V8_FLAGS, assertAsciiBundle } from './role-source.ts';

/** Runs the fixture in a Node started as a role starts (TurboFan off): was a hot function optimized before and after optimizeFrom(role, moment)? */
function optimized(role: string, moment: string): { before: boolean; after: boolean } {
  const out = execFileSync(process.execPath, ['--no-turbofan', '--allow-natives-syntax', '--import', 'tsx', 'test/fixtures/role-source/optimize.ts', role, moment], { encoding: 'utf8' });
  return JSON.parse(out) as { before: boolean; after: boolean };
}

describe('TurboFan per role', () => {
  it('is off while every role loads (the code caches are made and checked under these flags)', () => {
    expect(CODE_CACHE_V8_FLAGS).toContain('--no-turbofan');
    expect(Object.keys(OPTIMIZING_FROM).sort()).toEqual(Object.keys(ROLE_MODULES).sort());
  });

  it('comes on for apid once loaded, and for machined once the node is Running', () => {
    expect(optimized('apid', 'loaded')).toEqual({ before: false, after: true });
    expect(optimized('machined', 'running')).toEqual({ before: false, after: true });
  });

  it('stays off at any other moment, and for the daemons that only watch', () => {
    expect(optimized('machined', 'loaded')).toEqual({ before: false, after: false });
    expect(optimized('udevd', 'loaded')).toEqual({ before: false, after: false });
    expect(optimized('networkd', 'running')).toEqual({ before: false, after: false });
  });
});

describe('bundles read as Latin-1', () => {
  it('are checked to be ASCII, and one that is not is named with the place and the character', () => {
    expect(() => assertAsciiBundle('var a = "x";\nvar re = /[a-z]/;\n', 'ok.cjs')).not.toThrow();
    expect(() => assertAsciiBundle('var a = 1;\nvar re = /(ms|\u00b5s)/;\n', 'machined.cjs')).toThrow(/machined\.cjs: character 25 \(line 2\) is not ASCII, U\+00B5 in .*\(ms\|/);
    expect(() => assertAsciiBundle('x\u03bc', 'b.cjs')).toThrow(/U\+03BC/);
  });

  it('as Latin-1 are the same text as UTF-8 when ASCII', () => {
    const text = 'var s = "\\u00b5s";\n'.repeat(3);
    expect(Buffer.from(text, 'utf8').toString('latin1')).toBe(text);
  });
});
