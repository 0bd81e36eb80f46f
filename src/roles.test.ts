import { describe, expect, it } from 'vitest';
import { ROLE_MODULES, pickRole, roleNames, roleOf } from './roles.ts';

describe('pickRole', () => {
  it('takes the role from argv[0] inside the binary', () => {
    expect(pickRole('/sbin/init', ['/sbin/init'])?.role).toBe('init');
    expect(pickRole('apid', ['/sbin/init'])?.role).toBe('apid');
    expect(pickRole('/sbin/networkd', ['/sbin/init', '--x'])).toEqual({ role: 'networkd', rest: ['--x'] });
  });
  it('takes it from the first argument in a plain node run', () => {
    expect(pickRole('node', ['node', 'bronze.cjs', 'timed', 'a'])).toEqual({ role: 'timed', rest: ['a'] });
  });
  it('finds nothing for an unknown name', () => {
    expect(pickRole('sh', ['sh'])).toBeUndefined();
  });
});

describe('role table', () => {
  it('maps PID 1 names and daemon names to roles, and nothing else', () => {
    expect(roleOf('init')).toBe('machined');
    expect(roleOf('machined')).toBe('machined');
    expect(roleOf('udevd')).toBe('udevd');
    expect(roleOf('toString')).toBeUndefined();
    expect(roleOf('__proto__')).toBeUndefined();
    expect(roleNames()).toEqual(['init', 'machined', 'apid', 'trustd', 'networkd', 'timed', 'udevd']);
  });
  it('names a module exporting main() for every role', async () => {
    for (const [role, mod] of Object.entries(ROLE_MODULES)) {
      const m = (await import(/* @vite-ignore */ `./${mod}`)) as { main?: unknown };
      expect(typeof m.main, role).toBe('function');
    }
  });
});
