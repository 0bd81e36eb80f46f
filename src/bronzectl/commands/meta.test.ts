import { describe, expect, it } from 'vitest';
import { parseMetaKey } from './meta.ts';

describe('parseMetaKey', () => {
  it("reads keys as Go's strconv.ParseUint(s, 0, 8)", () => {
    expect(['12', '0xc', '0XC', '014', '0o14', '0b1100', '0x_c', '0', '255'].map(parseMetaKey)).toEqual([12, 12, 12, 12, 12, 12, 12, 0, 255]);
  });

  it('refuses what is not a uint8', () => {
    expect(() => parseMetaKey('256')).toThrow('strconv.ParseUint: parsing "256": value out of range');
    for (const bad of ['', '-1', 'user.1', '0x', '09', '1_2', '12a']) expect(() => parseMetaKey(bad), bad).toThrow(/invalid syntax/);
  });
});
