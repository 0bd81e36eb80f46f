// The power button (QEMU's `system_powerdown`, a press on metal). The kernel's ACPI button
// driver reports it as an input device named "Power Button"; on a device-tree machine (arm64
// QEMU `virt` booted without firmware, many boards) it is a KEY_POWER of the "gpio-keys"
// device. machined reads its evdev node and treats a KEY_POWER press as a request for an
// orderly shutdown.
import fs from 'node:fs';
import type { Logger } from '../lib/log.ts';

const EV_KEY = 1;
const KEY_POWER = 116;
/** struct input_event on 64-bit: struct timeval (16 bytes), u16 type, u16 code, s32 value. */
const EVENT_SIZE = 24;

/** The input device names that are power buttons: ACPI's, and device tree's gpio-keys. */
export const POWER_BUTTON_NAMES: ReadonlySet<string> = new Set(['Power Button', 'gpio-keys']);

export function findPowerButtons(sysInput = '/sys/class/input'): string[] {
  const out: string[] = [];
  let entries: string[] = [];
  try {
    entries = fs.readdirSync(sysInput).filter((e) => e.startsWith('event'));
  } catch {
    return out;
  }
  for (const ev of entries) {
    try {
      const name = fs.readFileSync(`${sysInput}/${ev}/device/name`, 'utf8').trim();
      if (POWER_BUTTON_NAMES.has(name)) out.push(`/dev/input/${ev}`);
    } catch {
      /* not an input device with a name */
    }
  }
  return out;
}

/** Decodes whole input_event records; returns true if any is a KEY_POWER press. */
export function hasPowerPress(buf: Buffer): boolean {
  for (let off = 0; off + EVENT_SIZE <= buf.length; off += EVENT_SIZE) {
    const type = buf.readUInt16LE(off + 16);
    const code = buf.readUInt16LE(off + 18);
    const value = buf.readInt32LE(off + 20);
    if (type === EV_KEY && code === KEY_POWER && value === 1) return true;
  }
  return false;
}

export function watchPowerButton(log: Logger, onPress: () => void): void {
  const devices = findPowerButtons();
  if (devices.length === 0) {
    log.warn('no power button found (ACPI or gpio-keys)');
    return;
  }
  for (const dev of devices) {
    const stream = fs.createReadStream(dev, { highWaterMark: EVENT_SIZE * 16 });
    let rest = Buffer.alloc(0);
    stream.on('data', (chunk) => {
      const buf = Buffer.concat([rest, chunk as Buffer]);
      const whole = buf.length - (buf.length % EVENT_SIZE);
      rest = buf.subarray(whole);
      if (hasPowerPress(buf.subarray(0, whole))) {
        log.info(`power button pressed (${dev})`);
        onPress();
      }
    });
    stream.on('error', (err) => log.warn(`power button ${dev}: ${err.message}`));
    log.info(`watching power button ${dev}`);
  }
}
