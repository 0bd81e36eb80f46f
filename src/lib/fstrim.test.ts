// FITRIM through koffi on a real filesystem: a loop-mounted xfs image (root only), and tmpfs,
// which cannot be trimmed.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initNative } from './native.ts';
import { fstrim, mount, umount } from './sys.ts';

const root = process.getuid?.() === 0;

describe.skipIf(!root)('fstrim (FITRIM)', () => {
  let dir: string;
  let mnt: string;
  beforeAll(async () => {
    await initNative();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-fstrim-'));
    mnt = path.join(dir, 'mnt');
    fs.mkdirSync(mnt);
    const img = path.join(dir, 'fs.img');
    fs.writeFileSync(img, '');
    fs.truncateSync(img, 320 * 1024 * 1024);
    execFileSync('mkfs.xfs', ['-q', img]);
    execFileSync('mount', ['-o', 'loop', img, mnt]);
  });
  afterAll(() => {
    execFileSync('umount', [mnt]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('discards the free space of a mounted filesystem, whole or in a range', () => {
    fs.writeFileSync(path.join(mnt, 'f'), Buffer.alloc(4 * 1024 * 1024, 1));
    fs.rmSync(path.join(mnt, 'f'));
    const whole = fstrim(mnt);
    expect(whole).toBeGreaterThan(0);
    expect(fstrim(mnt, { start: 0, len: 64 * 1024 * 1024, minLength: 4096 })).toBeLessThanOrEqual(64 * 1024 * 1024);
  });

  it('names the call and the errno when the filesystem cannot be trimmed', () => {
    const t = path.join(dir, 'tmp');
    fs.mkdirSync(t);
    mount('tmpfs', t, 'tmpfs', 0, null);
    try {
      expect(() => fstrim(t)).toThrow(/ioctl\(.*tmp, FITRIM\).*(EOPNOTSUPP|ENOTTY)/);
    } finally {
      umount(t);
    }
  });
});
