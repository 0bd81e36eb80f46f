import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { initGrubenv, nextBoot, readGrubenv, slotPresent, slotRoothash, updateGrubenv, writeSlot } from './slots.ts';

const hasGrubEditenv = (() => {
  try {
    execFileSync('grub-editenv', ['--version'], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
})();

describe('boot slots on a BOOT directory', () => {
  let boot: string;
  let src: string;
  beforeEach(() => {
    boot = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-slots-'));
    src = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-slot-src-'));
    fs.writeFileSync(path.join(src, 'vmlinuz'), 'kernel v2');
    fs.writeFileSync(path.join(src, 'initramfs.xz'), Buffer.alloc(5 << 20, 7));
  });
  afterEach(() => {
    fs.rmSync(boot, { recursive: true, force: true });
    fs.rmSync(src, { recursive: true, force: true });
  });

  it('writes a slot whole, replacing the old one, and reports the bytes copied', async () => {
    fs.mkdirSync(path.join(boot, 'B'));
    fs.writeFileSync(path.join(boot, 'B', 'vmlinuz'), 'kernel v1');
    fs.writeFileSync(path.join(boot, 'B', 'stale'), 'x');
    const seen: number[] = [];
    const roothash = 'c0'.repeat(32);
    await writeSlot(boot, 'B', { vmlinuz: path.join(src, 'vmlinuz'), initramfs: path.join(src, 'initramfs.xz'), roothash }, (n) => seen.push(n));
    expect(fs.readFileSync(path.join(boot, 'B', 'vmlinuz'), 'utf8')).toBe('kernel v2');
    expect(fs.readdirSync(path.join(boot, 'B')).sort()).toEqual(['initramfs.xz', 'roothash.env', 'vmlinuz']);
    // The root hash as GRUB's load_env reads it: a 1024-byte environment block.
    expect(fs.statSync(path.join(boot, 'B', 'roothash.env')).size).toBe(1024);
    expect(slotRoothash(boot, 'B')).toBe(roothash);
    expect(slotRoothash(boot, 'A')).toBe('');
    await expect(writeSlot(boot, 'A', { vmlinuz: path.join(src, 'vmlinuz'), initramfs: path.join(src, 'initramfs.xz'), roothash: 'nope' })).rejects.toThrow(/not a dm-verity root hash/);
    expect(fs.readdirSync(boot).sort()).toEqual(['B']);
    expect(seen.at(-1)).toBe(9 + (5 << 20));
    expect(slotPresent(boot, 'B')).toBe(true);
    expect(slotPresent(boot, 'A')).toBe(false);
  });

  it('keeps grubenv 1024 bytes and in the same file when variables change', () => {
    initGrubenv(boot, { saved_entry: 'A', bronze_extra: '' });
    const file = path.join(boot, 'grub', 'grubenv');
    const ino = fs.statSync(file).ino;
    updateGrubenv(boot, { next_entry: 'B', next_tries: '1' });
    expect(fs.statSync(file).size).toBe(1024);
    expect(fs.statSync(file).ino).toBe(ino);
    expect(Object.fromEntries(readGrubenv(boot))).toEqual({ saved_entry: 'A', next_entry: 'B', next_tries: '1' });
    updateGrubenv(boot, { saved_entry: 'B', next_entry: '', next_tries: '' });
    expect(Object.fromEntries(readGrubenv(boot))).toEqual({ saved_entry: 'B' });
  });

  it.skipIf(!hasGrubEditenv)('writes what grub-editenv reads', () => {
    initGrubenv(boot, { saved_entry: 'A' });
    updateGrubenv(boot, { next_entry: 'B', bronze_extra: 'ip=dhcp bronze.config=http://10.0.0.1/a.yaml' });
    const listed = execFileSync('grub-editenv', [path.join(boot, 'grub', 'grubenv'), 'list'], { encoding: 'utf8' });
    expect(listed.split('\n').filter(Boolean).sort()).toEqual(['bronze_extra=ip=dhcp bronze.config=http://10.0.0.1/a.yaml', 'next_entry=B', 'saved_entry=A']);
  });

  it('predicts the slot GRUB boots next, as grub.cfg decides', () => {
    expect(nextBoot(new Map())).toEqual({ slot: 'A', trial: false, good: 'A' });
    expect(nextBoot(new Map([['saved_entry', 'B']]))).toEqual({ slot: 'B', trial: false, good: 'B' });
    expect(nextBoot(new Map([['saved_entry', 'A'], ['next_entry', 'B']]))).toEqual({ slot: 'B', trial: true, good: 'A' });
    expect(nextBoot(new Map([['saved_entry', 'junk'], ['next_entry', 'C']]))).toEqual({ slot: 'A', trial: false, good: 'A' });
  });
});
