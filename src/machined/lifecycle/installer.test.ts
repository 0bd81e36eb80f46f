import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIN_DISK_BYTES } from '../../disk/layout.ts';
import type { BlockDisk } from './disks.ts';
import { bootloaderFiles, checkInstallDisk, installToDisk, partitionDevice } from './installer.ts';

describe('checkInstallDisk', () => {
  let dir: string;
  const disk = (name: string, bytes: number, o: Partial<BlockDisk> = {}): BlockDisk => {
    const device = path.join(dir, name);
    fs.closeSync(fs.openSync(device, 'w'));
    fs.truncateSync(device, bytes);
    return { name, device, bytes, sectorSize: 512, readOnly: false, ...o };
  };
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-installer-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('accepts a blank disk big enough for the layout', async () => {
    const r = await checkInstallDisk(disk('vda', MIN_DISK_BYTES), false);
    expect(r.held).toBeUndefined();
    expect(r.layout.partitions.map((p) => p.name)).toEqual(['EFI', 'BIOS', 'BOOT', 'META', 'STATE', 'EPHEMERAL']);
  });

  it('refuses a disk too small, read-only, or holding data without wipe, saying why', async () => {
    await expect(checkInstallDisk(disk('small', 512 << 20), true)).rejects.toThrow(/small: disk of 536870912 bytes .* is too small/);
    await expect(checkInstallDisk(disk('ro', 2 * 1024 ** 3, { readOnly: true }), true)).rejects.toThrow(/ro is read-only/);
    const used = disk('used', 2 * 1024 ** 3);
    fs.writeFileSync(used.device, 'data', { flag: 'r+' });
    await expect(checkInstallDisk(used, false)).rejects.toThrow(/holds data \(non-zero bytes in its first MiB\): refusing .* --wipe/);
    expect((await checkInstallDisk(used, true)).held).toMatch(/non-zero/);
  });

  it('names partitions as the kernel does', () => {
    expect(partitionDevice({ name: 'vda', device: '/dev/vda', bytes: 0, sectorSize: 512, readOnly: false }, 3)).toBe('/dev/vda3');
    expect(partitionDevice({ name: 'nvme0n1', device: '/dev/nvme0n1', bytes: 0, sectorSize: 512, readOnly: false }, 3)).toBe('/dev/nvme0n1p3');
  });
});

describe('the bootloader an install copies', () => {
  it('is BIOS and UEFI GRUB on amd64, UEFI alone on arm64', () => {
    expect(bootloaderFiles('amd64')).toEqual(['mbr.bin', 'bios.img', 'efi.img', 'boot-uuid', 'grub/grub.cfg']);
    expect(bootloaderFiles('arm64')).toEqual(['efi.img', 'boot-uuid', 'grub/grub.cfg']);
    expect(() => bootloaderFiles('riscv64')).toThrow(/no bootloader for architecture riscv64 \(known: amd64, arm64\)/);
  });

  it('refuses, before writing anything, an image that lacks a file its arch needs', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-installer-bl-'));
    try {
      const device = path.join(dir, 'vda');
      fs.closeSync(fs.openSync(device, 'w'));
      fs.truncateSync(device, MIN_DISK_BYTES);
      const bl = path.join(dir, 'bootloader');
      fs.mkdirSync(path.join(bl, 'grub'), { recursive: true });
      for (const f of ['efi.img', 'boot-uuid', 'grub/grub.cfg']) fs.writeFileSync(path.join(bl, f), 'x');
      const plan = (arch: string) => ({
        disk: { name: 'vda', device, bytes: MIN_DISK_BYTES, sectorSize: 512, readOnly: false },
        wipe: false,
        files: { vmlinuz: '/nonexistent', initramfs: '/nonexistent', roothash: '0'.repeat(64) },
        version: 'v0',
        extraKernelArgs: [],
        bootloaderDir: bl,
        arch,
      });
      // An arm64 bootloader (UEFI only) is not enough for amd64, which boots with BIOS too.
      await expect(installToDisk(plan('amd64'), () => {})).rejects.toThrow(/no bootloader file mbr\.bin/);
      fs.rmSync(path.join(bl, 'efi.img'));
      await expect(installToDisk(plan('arm64'), () => {})).rejects.toThrow(/no bootloader file efi\.img/);
      // With a UKI (an install under Secure Boot), the signed systemd-boot must be there too.
      fs.writeFileSync(path.join(bl, 'efi.img'), 'x');
      for (const f of ['mbr.bin', 'bios.img']) fs.writeFileSync(path.join(bl, f), 'x');
      await expect(installToDisk({ ...plan('amd64'), uki: path.join(dir, 'bronze.efi') }, () => {})).rejects.toThrow(/no bootloader file sdboot\/BOOTX64\.EFI .*cannot install for Secure Boot/);
      // Nothing written: the disk is still sparse, with no block allocated.
      expect(fs.statSync(device).blocks, 'nothing written').toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
