// The A/B slots on a mounted BOOT partition and GRUB's environment block that chooses between
// them (image-builder/grub/disk.cfg documents the variables: saved_entry, next_entry,
// next_tries, bronze_extra). A slot is a directory holding vmlinuz, initramfs.xz and
// roothash.env (GRUB's load_env reads the slot's dm-verity root hash from it); a slot
// is written beside itself (<slot>.new) and renamed into place, so GRUB never finds half of
// one. grubenv is rewritten in place, in the same 1024 bytes GRUB itself writes (save_env
// writes through the file's block list, so the file must keep its blocks).
import fs from 'node:fs';
import path from 'node:path';
import { parseGrubenv, serializeGrubenv } from '../../install/grubenv.ts';
import { copyImage } from './fs-tools.ts';

export type Slot = 'A' | 'B';
export const SLOTS: readonly Slot[] = ['A', 'B'];

export interface SlotFiles {
  vmlinuz: string;
  initramfs: string;
  /** The dm-verity root hash of the rootfs in initramfs (64 hex digits): the slot boots with it. */
  roothash: string;
}

/** The slot's root hash file, a GRUB environment block (bronze_roothash=<hex>). */
export const ROOTHASH_ENV = 'roothash.env';

export const otherSlot = (s: Slot): Slot => (s === 'A' ? 'B' : 'A');
export const isSlot = (s: string | undefined): s is Slot => s === 'A' || s === 'B';

const GRUBENV = 'grub/grubenv';

/** Whether a slot holds a kernel and an initramfs. */
export function slotPresent(boot: string, slot: Slot): boolean {
  return fs.existsSync(path.join(boot, slot, 'vmlinuz')) && fs.existsSync(path.join(boot, slot, 'initramfs.xz'));
}

/** The root hash a slot boots with ('' when it has none). */
export function slotRoothash(boot: string, slot: Slot): string {
  try {
    return parseGrubenv(fs.readFileSync(path.join(boot, slot, ROOTHASH_ENV))).get('bronze_roothash') ?? '';
  } catch {
    return '';
  }
}

/** Copies the kernel and initramfs into `slot` with its root hash, replacing it whole. */
export async function writeSlot(boot: string, slot: Slot, files: SlotFiles, onBytes?: (n: number) => void): Promise<void> {
  if (!/^[0-9a-f]{64}$/.test(files.roothash)) throw new Error(`slot ${slot}: ${JSON.stringify(files.roothash)} is not a dm-verity root hash`);
  const fresh = path.join(boot, `${slot}.new`);
  fs.rmSync(fresh, { recursive: true, force: true });
  fs.mkdirSync(fresh, { recursive: true });
  fs.writeFileSync(path.join(fresh, ROOTHASH_ENV), serializeGrubenv(new Map([['bronze_roothash', files.roothash]])));
  let done = 0;
  for (const [name, from] of [
    ['vmlinuz', files.vmlinuz],
    ['initramfs.xz', files.initramfs],
  ] as const) {
    await copyImage(from, path.join(fresh, name), { create: true, onBytes: (n) => onBytes?.(done + n) });
    done += fs.statSync(from).size;
  }
  const old = path.join(boot, `${slot}.old`);
  fs.rmSync(old, { recursive: true, force: true });
  if (fs.existsSync(path.join(boot, slot))) fs.renameSync(path.join(boot, slot), old);
  fs.renameSync(fresh, path.join(boot, slot));
  fs.rmSync(old, { recursive: true, force: true });
  syncDir(boot);
}

function syncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** GRUB's variables as they are on BOOT. */
export function readGrubenv(boot: string): Map<string, string> {
  return parseGrubenv(fs.readFileSync(path.join(boot, GRUBENV)));
}

/** A fresh grubenv (install). */
export function initGrubenv(boot: string, vars: Record<string, string>): void {
  const file = path.join(boot, GRUBENV);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, serializeGrubenv(new Map(Object.entries(vars).filter(([, v]) => v !== ''))));
  const fd = fs.openSync(file, 'r');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
}

/** Sets (non-empty value) or removes (empty value) variables, rewriting the block in place. */
export function updateGrubenv(boot: string, changes: Record<string, string>): Map<string, string> {
  const file = path.join(boot, GRUBENV);
  const vars = readGrubenv(boot);
  for (const [k, v] of Object.entries(changes)) {
    if (v === '') vars.delete(k);
    else vars.set(k, v);
  }
  const block = serializeGrubenv(vars);
  const fd = fs.openSync(file, 'r+');
  try {
    fs.writeSync(fd, block, 0, block.length, 0);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return vars;
}

/**
 * Where a slot's preinit records why its boot stopped (image-builder/preinit/preinit.c,
 * record_failure): one line, in the slot's own directory, so that writing the slot anew
 * (writeSlot) clears it.
 */
export const BOOT_FAILURE = 'boot-failure';

/** The slot's recorded boot failure, '' when none. */
export function slotFailure(boot: string, slot: Slot): string {
  try {
    return fs.readFileSync(path.join(boot, slot, BOOT_FAILURE), 'utf8').trim();
  } catch {
    return '';
  }
}

/** Removes the slot's boot failure record (the slot booted through to machined since). */
export function clearSlotFailure(boot: string, slot: Slot): void {
  fs.rmSync(path.join(boot, slot, BOOT_FAILURE), { force: true });
}

/** What BOOT says, read in one go: GRUB's variables, which slots hold an image, and the boot failures they recorded. */
export interface BootSnapshot {
  vars: Map<string, string>;
  present: Record<Slot, boolean>;
  failure: Record<Slot, string>;
}

export function bootSnapshot(boot: string): BootSnapshot {
  return {
    vars: readGrubenv(boot),
    present: { A: slotPresent(boot, 'A'), B: slotPresent(boot, 'B') },
    failure: { A: slotFailure(boot, 'A'), B: slotFailure(boot, 'B') },
  };
}

/** What GRUB will boot next time, from its variables (mirrors grub.cfg's logic). */
export function nextBoot(vars: Map<string, string>): { slot: Slot; trial: boolean; good: Slot } {
  const good: Slot = vars.get('saved_entry') === 'B' ? 'B' : 'A';
  const next = vars.get('next_entry');
  if (isSlot(next)) return { slot: next, trial: true, good };
  return { slot: good, trial: false, good };
}
