import { describe, expect, it } from 'vitest';
import { pickRole } from './roles.ts';

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
