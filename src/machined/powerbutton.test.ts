import { describe, expect, it } from 'vitest';
import { hasPowerPress } from './powerbutton.ts';

function event(type: number, code: number, value: number): Buffer {
  const b = Buffer.alloc(24);
  b.writeUInt16LE(type, 16);
  b.writeUInt16LE(code, 18);
  b.writeInt32LE(value, 20);
  return b;
}

describe('power button events', () => {
  it('sees a KEY_POWER press among other events', () => {
    expect(hasPowerPress(Buffer.concat([event(0, 0, 0), event(1, 116, 1), event(0, 0, 0)]))).toBe(true);
  });
  it('ignores releases, other keys and partial records', () => {
    expect(hasPowerPress(event(1, 116, 0))).toBe(false);
    expect(hasPowerPress(event(1, 28, 1))).toBe(false);
    expect(hasPowerPress(event(1, 116, 1).subarray(0, 20))).toBe(false);
  });
});
