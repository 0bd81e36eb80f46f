import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { OPTIMIZING_FROM, ROLE_MODULES } from '../roles.ts';
import { CODE_CACHE_V8_FLAGS } from './role-source.ts';

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
