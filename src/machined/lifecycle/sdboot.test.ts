import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOADER_GUID, defaultEntry, encodeEfiString, entryIdFor, readEfiString, selectedEntry, setDefaultEntry, setOneShot, slotOfEntry, ukiPresent, writeUki } from './sdboot.ts';

describe('systemd-boot on the ESP', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-sdboot-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads and writes EFI string variables as efivarfs has them: attributes, then UTF-16LE ending in NUL', () => {
    const bytes = encodeEfiString('bronze-b.efi');
    expect(bytes.subarray(0, 4)).toEqual(Buffer.from([7, 0, 0, 0]));
    expect(bytes.subarray(4).toString('utf16le')).toBe('bronze-b.efi\0');
    fs.writeFileSync(path.join(dir, `LoaderEntrySelected-${LOADER_GUID}`), bytes);
    expect(readEfiString(dir, 'LoaderEntrySelected')).toBe('bronze-b.efi');
    expect(readEfiString(dir, 'LoaderEntryOneShot')).toBeUndefined();
    expect(selectedEntry(dir)).toEqual({ id: 'bronze-b.efi', slot: 'B' });
  });

  it('knows a slot entry by its file name in either case, and spells the other slot the same way', () => {
    expect(slotOfEntry('bronze-a.efi')).toBe('A');
    expect(slotOfEntry('BRONZE-B.EFI')).toBe('B');
    for (const other of ['bronze.efi', 'bronze-c.efi', 'auto-reboot-to-firmware-setup', '', undefined]) expect(slotOfEntry(other)).toBeUndefined();
    expect(entryIdFor('bronze-a.efi', 'B')).toBe('bronze-b.efi');
    expect(entryIdFor('BRONZE-A.EFI', 'B')).toBe('BRONZE-B.EFI');
    // The ISO's UKI (bronze.efi) is no slot: a boot from it is not a boot from the disk.
    fs.writeFileSync(path.join(dir, `LoaderEntrySelected-${LOADER_GUID}`), encodeEfiString('bronze.efi'));
    expect(selectedEntry(dir)).toBeUndefined();
  });

  it("sets loader.conf's default and keeps its other lines", () => {
    fs.mkdirSync(path.join(dir, 'loader'));
    fs.writeFileSync(path.join(dir, 'loader/loader.conf'), 'timeout 1\ndefault bronze-a.efi\nconsole-mode keep\nsecure-boot-enroll force\n');
    expect(defaultEntry(dir)).toBe('bronze-a.efi');
    setDefaultEntry(dir, 'bronze-b.efi');
    expect(fs.readFileSync(path.join(dir, 'loader/loader.conf'), 'utf8')).toBe('timeout 1\nconsole-mode keep\nsecure-boot-enroll force\ndefault bronze-b.efi\n');
    expect(defaultEntry(dir)).toBe('bronze-b.efi');
    expect(fs.readdirSync(path.join(dir, 'loader'))).toEqual(['loader.conf']);
  });

  it("writes a slot's UKI whole, replacing the one there", async () => {
    const uki = path.join(dir, 'new.efi');
    fs.writeFileSync(uki, Buffer.alloc(300_000, 2));
    fs.mkdirSync(path.join(dir, 'esp/EFI/Linux'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'esp/EFI/Linux/bronze-b.efi'), 'old');
    expect(ukiPresent(path.join(dir, 'esp'), 'A')).toBe(false);
    await writeUki(path.join(dir, 'esp'), 'B', uki);
    expect(fs.readFileSync(path.join(dir, 'esp/EFI/Linux/bronze-b.efi')).equals(fs.readFileSync(uki))).toBe(true);
    expect(fs.readdirSync(path.join(dir, 'esp/EFI/Linux'))).toEqual(['bronze-b.efi']);
    expect(ukiPresent(path.join(dir, 'esp'), 'B')).toBe(true);
  });

  it('sets the one-shot entry with efivarfs writable for that write only, read-only again even when it fails', () => {
    const remounts: boolean[] = [];
    setOneShot('bronze-b.efi', { efivars: dir, remount: (w) => void remounts.push(w) });
    expect(readEfiString(dir, 'LoaderEntryOneShot')).toBe('bronze-b.efi');
    expect(remounts).toEqual([true, false]);
    remounts.length = 0;
    expect(() => setOneShot('bronze-a.efi', { efivars: path.join(dir, 'missing'), remount: (w) => void remounts.push(w) })).toThrow(/ENOENT/);
    expect(remounts).toEqual([true, false]);
  });
});
