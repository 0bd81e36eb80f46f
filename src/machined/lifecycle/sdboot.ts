// systemd-boot, the UEFI side of a node that boots under Secure Boot (image-builder/
// secureboot-disk.sh). Each slot is a signed UKI on the EFI system partition, EFI/Linux/
// bronze-a.efi and bronze-b.efi (type #2 entries, whose ids are their file names);
// loader/loader.conf's `default` names the known-good one. An upgrade or a rollback boots the
// other once through the EFI variable LoaderEntryOneShot, which systemd-boot removes as it reads
// it: when that slot does not come up (its kernel panics, the machine reboots), systemd-boot
// boots the default again, as GRUB's next_entry does on BIOS. The entry it booted is in
// LoaderEntrySelected. These are the Boot Loader Interface's variables, under systemd's vendor
// GUID; an efivarfs file is 4 bytes of attributes, then the value (here UTF-16LE, NUL-ended).
//
// GRUB's grubenv on BOOT is kept saying the same (commit.ts, upgrade.ts, rollback.ts): the
// boot status reads it, and a BIOS boot of the same disk follows it.
import fs from 'node:fs';
import path from 'node:path';
import { copyImage } from './fs-tools.ts';
import { type Slot, isSlot } from './slots.ts';

/** systemd's Boot Loader Interface vendor GUID. */
export const LOADER_GUID = '4a67b082-0a4c-41cf-b6c7-440b29bb8c4f';
export const EFIVARS = '/sys/firmware/efi/efivars';
/** EFI_VARIABLE_NON_VOLATILE | BOOTSERVICE_ACCESS | RUNTIME_ACCESS, as systemd writes its own. */
const ATTRIBUTES = 0x7;

/** A slot's UKI on the ESP, under EFI/Linux (lower case, as secureboot-esp.sh writes it). */
export const ukiFile = (slot: Slot): string => `bronze-${slot.toLowerCase()}.efi`;
export const UKI_DIR = 'EFI/Linux';
export const LOADER_CONF = 'loader/loader.conf';

/** A UTF-16LE, NUL-ended EFI string variable's value (after the attributes), or undefined. */
export function readEfiString(efivars: string, name: string): string | undefined {
  let data: Buffer;
  try {
    data = fs.readFileSync(path.join(efivars, `${name}-${LOADER_GUID}`));
  } catch {
    return undefined;
  }
  if (data.length < 4) return undefined;
  const text = data.subarray(4, 4 + ((data.length - 4) & ~1)).toString('utf16le');
  const nul = text.indexOf('\0');
  return nul < 0 ? text : text.slice(0, nul);
}

/** The bytes of an efivarfs file that sets a string variable. */
export function encodeEfiString(value: string): Buffer {
  const attrs = Buffer.alloc(4);
  attrs.writeUInt32LE(ATTRIBUTES);
  return Buffer.concat([attrs, Buffer.from(`${value}\0`, 'utf16le')]);
}

/** The Bronze slot an entry id names (bronze-a.efi, BRONZE-B.EFI), else undefined. */
export function slotOfEntry(id: string | undefined): Slot | undefined {
  const m = /^bronze-([ab])\.efi$/i.exec(id ?? '');
  const s = m?.[1]!.toUpperCase();
  return isSlot(s) ? s : undefined;
}

/**
 * The id of the other slot's entry, spelled as the booted one is: systemd-boot takes an id from
 * the file name as the firmware's FAT driver reports it, and one-shot and default must match it.
 */
export function entryIdFor(booted: string, slot: Slot): string {
  const letter = booted.charAt(7);
  return booted.slice(0, 7) + (letter === letter.toUpperCase() ? slot : slot.toLowerCase()) + booted.slice(8);
}

/** loader.conf as the images write it (image-builder/secureboot-esp.sh), with `id` the default. */
export function loaderConf(id: string): string {
  return `timeout 1\ndefault ${id}\nconsole-mode keep\nsecure-boot-enroll force\n`;
}

/**
 * Whether systemd-boot started one of Bronze's UKIs (a slot's, or the install media's
 * bronze.efi): an install from such a boot puts systemd-boot and the UKI on the disk's ESP.
 */
export function bootedBronzeUki(efivars = EFIVARS): string | undefined {
  const id = readEfiString(efivars, 'LoaderEntrySelected');
  return id && /^bronze(-[ab])?\.efi$/i.test(id) ? id : undefined;
}

/** Where systemd-boot started this boot from: its entry id and the slot, when it is a Bronze slot. */
export function selectedEntry(efivars = EFIVARS): { id: string; slot: Slot } | undefined {
  const id = readEfiString(efivars, 'LoaderEntrySelected');
  const slot = slotOfEntry(id);
  return id && slot ? { id, slot } : undefined;
}

/**
 * Writes a slot's UKI into a mounted ESP, whole: the old one goes first (two UKIs and a third
 * being written would not fit), then the new one is written beside its place and renamed.
 */
export async function writeUki(esp: string, slot: Slot, uki: string, onBytes?: (n: number) => void): Promise<void> {
  const dir = path.join(esp, UKI_DIR);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, ukiFile(slot));
  const fresh = `${file}.new`;
  fs.rmSync(fresh, { force: true });
  fs.rmSync(file, { force: true });
  await copyImage(uki, fresh, { create: true, onBytes });
  fs.renameSync(fresh, file);
}

/** Whether a mounted ESP holds the slot's UKI. */
export function ukiPresent(esp: string, slot: Slot): boolean {
  return fs.existsSync(path.join(esp, UKI_DIR, ukiFile(slot)));
}

/** loader.conf's `default`, or undefined. */
export function defaultEntry(esp: string): string | undefined {
  try {
    const line = fs
      .readFileSync(path.join(esp, LOADER_CONF), 'utf8')
      .split('\n')
      .find((l) => /^default\s/.test(l));
    return line?.replace(/^default\s+/, '').trim();
  } catch {
    return undefined;
  }
}

/** Makes `id` loader.conf's default, keeping its other lines; written beside it and renamed. */
export function setDefaultEntry(esp: string, id: string): void {
  const file = path.join(esp, LOADER_CONF);
  let lines: string[] = [];
  try {
    lines = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const kept = lines.filter((l) => !/^default\s/.test(l));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(`${file}.new`, [...kept, `default ${id}`, ''].join('\n'));
  fs.renameSync(`${file}.new`, file);
}

/**
 * Boots entry `id` once, at the next boot only. efivarfs is mounted read-only on a node; it is
 * made writable for this one write (`remount(true)`), then read-only again.
 */
export function setOneShot(id: string, o: { efivars?: string; remount?: (writable: boolean) => void } = {}): void {
  const file = path.join(o.efivars ?? EFIVARS, `LoaderEntryOneShot-${LOADER_GUID}`);
  o.remount?.(true);
  try {
    // One write(2) of attributes and value: efivarfs takes a variable whole, or not at all.
    fs.writeFileSync(file, encodeEfiString(id));
  } finally {
    o.remount?.(false);
  }
}
