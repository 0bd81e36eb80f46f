import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPowerButtons, hasPowerPress } from './powerbutton.ts';

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

describe('finding power buttons', () => {
  it('takes ACPI\'s "Power Button" and device tree\'s gpio-keys, nothing else', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-input-'));
    try {
      const dev = (ev: string, name: string) => {
        fs.mkdirSync(path.join(dir, ev, 'device'), { recursive: true });
        fs.writeFileSync(path.join(dir, ev, 'device', 'name'), `${name}\n`);
      };
      dev('event0', 'Power Button');
      dev('event1', 'AT Translated Set 2 keyboard');
      dev('event2', 'gpio-keys');
      fs.mkdirSync(path.join(dir, 'mouse0'));
      expect(findPowerButtons(dir).sort()).toEqual(['/dev/input/event0', '/dev/input/event2']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
