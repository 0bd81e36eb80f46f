import { describe, expect, it } from 'vitest';
import { parseCmdline } from './cmdline.ts';

describe('parseCmdline', () => {
  it('parses flags, key=value and quoted values', () => {
    const c = parseCmdline('console=ttyS0,115200 slab_nomerge bronze.hostname="node one" bronze.debug.kill=timed\n');
    expect(c.get('console')).toBe('ttyS0,115200');
    expect(c.has('slab_nomerge')).toBe(true);
    expect(c.get('slab_nomerge')).toBe('');
    expect(c.get('bronze.hostname')).toBe('node one');
    expect(c.get('bronze.debug.kill')).toBe('timed');
  });
  it('keeps the last value of a repeated key', () => {
    expect(parseCmdline('a=1 a=2').get('a')).toBe('2');
  });
});
