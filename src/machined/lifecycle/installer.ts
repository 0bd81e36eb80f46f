// Installs Bronze onto one whole disk: the GPT of src/disk/layout.ts, GRUB for BIOS and
// UEFI (arm64: UEFI) from the bootloader files image-builder/bootloader.sh made (copied byte for byte, as
// disk.sh copies them into disk.raw; under Secure Boot, signed systemd-boot and slot A's signed
// UKI on the ESP instead, as secureboot-disk.sh has them), xfs on BOOT, STATE and EPHEMERAL (each
// inside LUKS2 when machine.systemDiskEncryption asks for it), the image's kernel and initramfs
// in slot A, grubenv choosing A, META recording the install, and the machine configuration in
// STATE. Only the named disk is opened for writing.
import fs from 'node:fs';
import path from 'node:path';
import { writeGpt } from '../../disk/gpt-write.ts';
import { bronzeArch } from '../../install/image.ts';
import { type DiskLayout, type PartitionName, partitionByName, planLayout } from '../../disk/layout.ts';
import { rereadPartitions } from '../../lib/sys.ts';
import { serializeGrubenv } from '../../install/grubenv.ts';
import { CONFIG_FILE } from '../config/manager.ts';
import { type BlockDisk, DiskError, describeContents } from './disks.ts';
import { copyImage, copyTree, mkfsXfs, withMount } from './fs-tools.ts';
import { META_CONFIGURED, MetaStore } from '../../install/meta.ts';
import { nodeIdentity } from '../config/identity.ts';
import { type SlotFiles, initGrubenv, writeSlot } from './slots.ts';
import { LOADER_CONF, UKI_DIR, loaderConf, ukiFile, writeUki } from './sdboot.ts';
import { systemDiskEncryptionOf } from '../../config/accessors/encryption.ts';
import { META_STATE_ENCRYPTION, closeEncrypted, formatEncrypted, mapperName } from '../encryption.ts';

/** Whether a configuration gives the node its identity (the v1alpha1 document: type, token, CA). */
function hasIdentity(text: string | undefined): boolean {
  if (text === undefined) return false;
  try {
    nodeIdentity(text);
    return true;
  } catch {
    return false;
  }
}

export interface InstallProgress {
  (stage: string, message: string, done?: number, total?: number): void;
}

export interface InstallPlan {
  disk: BlockDisk;
  wipe: boolean;
  /** The kernel and initramfs for slot A. */
  files: SlotFiles;
  /** The version those files are (recorded in META). */
  version: string;
  /** GRUB's bronze_extra: kernel arguments for the installed system. */
  extraKernelArgs: string[];
  /** The machine configuration to put in STATE, if any. */
  configText?: string;
  /**
   * Slot A's signed UKI: with it, UEFI boots systemd-boot and the UKI from the ESP instead of
   * GRUB (an install under Secure Boot; the bootloader's sdboot/ has the signed systemd-boot).
   */
  uki?: string;
  /** image-builder/bootloader.sh's output (in the rootfs: /usr/share/bronze/bootloader). */
  bootloaderDir: string;
  /** The architecture the bootloader is for (default: this machine's): which firmwares it boots with. */
  arch?: string;
  devRoot?: string;
  sysRoot?: string;
  signal?: AbortSignal;
}

/** The kernel's device for partition `number` of a disk (vda → vda3, nvme0n1 → nvme0n1p3). */
export function partitionDevice(disk: BlockDisk, number: number): string {
  return /\d$/.test(disk.device) ? `${disk.device}p${number}` : `${disk.device}${number}`;
}

/** Waits for the kernel (devtmpfs) to show the partitions' device nodes. */
async function waitForPartitions(devices: string[], timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const missing = devices.filter((d) => !fs.existsSync(d));
    if (missing.length === 0) return;
    if (Date.now() > until) throw new Error(`the kernel shows no ${missing.join(', ')} after the partition table was written`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Whether Bronze may be installed to `disk`: writable, big enough for the layout, and blank
 * unless `wipe`. Throws a DiskError saying why not; returns the layout and what the disk holds.
 */
export async function checkInstallDisk(disk: BlockDisk, wipe: boolean, extraKernelArgs: string[] = []): Promise<{ layout: DiskLayout; held: string | undefined }> {
  if (disk.readOnly) throw new DiskError(`${disk.device} is read-only`);
  // GRUB's boot code and the ESP image are made for 512-byte sectors (bootloader.sh).
  if (disk.sectorSize !== 512) throw new DiskError(`${disk.device} has ${disk.sectorSize}-byte sectors: Bronze installs to 512-byte-sector disks only`);
  try {
    serializeGrubenv({ saved_entry: 'A', next_entry: 'B', next_tries: '1', bronze_extra: extraKernelArgs.join(' ') });
  } catch (err) {
    throw new DiskError(`the extra kernel arguments do not fit in GRUB's environment block: ${(err as Error).message}`);
  }
  // An exclusive open fails while the disk or one of its partitions is mounted or in use.
  try {
    fs.closeSync(fs.openSync(disk.device, fs.constants.O_RDWR | fs.constants.O_EXCL));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new DiskError(code === 'EBUSY' ? `${disk.device} is in use (mounted, or a partition of it is)` : `${disk.device}: ${(err as Error).message}`);
  }
  let layout: DiskLayout;
  try {
    layout = planLayout(disk.bytes, disk.sectorSize);
  } catch (err) {
    throw new DiskError(`${disk.device}: ${(err as Error).message}`);
  }
  const held = await describeContents(disk);
  if (held && !wipe) {
    throw new DiskError(`${disk.device} holds ${held}: refusing to install over it (set machine.install.wipe: true, or bronzectl install --wipe, to erase it)`);
  }
  return { layout, held };
}

/**
 * The firmwares an installed disk boots with, per architecture, and the bootloader files each
 * needs (image-builder/bootloader.sh): amd64 BIOS and UEFI; arm64 UEFI only (its disks keep the
 * same layout, with an empty BIOS boot partition and no MBR boot code).
 */
export const BOOT_FIRMWARES: Readonly<Record<string, readonly ('bios' | 'uefi')[]>> = { amd64: ['bios', 'uefi'], arm64: ['uefi'] };
const FIRMWARE_FILES = { bios: ['mbr.bin', 'bios.img'], uefi: ['efi.img'] } as const;

/** What an install under Secure Boot puts on the ESP in GRUB's place (image-builder/bootloader.sh's sdboot/). */
export const SDBOOT_FILES = ['sdboot/BOOTX64.EFI', 'sdboot/keys/PK.auth', 'sdboot/keys/KEK.auth', 'sdboot/keys/db.auth'] as const;

/** The bootloader files an install for `arch` copies onto the disk. */
export function bootloaderFiles(arch: string): string[] {
  const firmwares = BOOT_FIRMWARES[arch];
  if (!firmwares) throw new Error(`no bootloader for architecture ${arch} (known: ${Object.keys(BOOT_FIRMWARES).join(', ')})`);
  return [...firmwares.flatMap((f) => FIRMWARE_FILES[f]), 'boot-uuid', 'grub/grub.cfg'];
}

export async function installToDisk(plan: InstallPlan, progress: InstallProgress): Promise<void> {
  const { disk } = plan;
  const step = (stage: string, message: string, done?: number, total?: number) => {
    if (plan.signal?.aborted) throw new Error('install cancelled');
    progress(stage, message, done, total);
  };
  const { layout, held } = await checkInstallDisk(disk, plan.wipe, plan.extraKernelArgs);
  const arch = plan.arch ?? bronzeArch();
  for (const f of bootloaderFiles(arch)) {
    if (!fs.existsSync(path.join(plan.bootloaderDir, f))) throw new Error(`the image has no bootloader file ${f} in ${plan.bootloaderDir}`);
  }

  if (plan.uki) {
    for (const f of SDBOOT_FILES) {
      if (!fs.existsSync(path.join(plan.bootloaderDir, f))) throw new Error(`the image has no bootloader file ${f} in ${plan.bootloaderDir}: it cannot install for Secure Boot`);
    }
  }

  const bios = BOOT_FIRMWARES[arch]!.includes('bios');
  const mbr = bios ? fs.readFileSync(path.join(plan.bootloaderDir, 'mbr.bin')) : undefined;
  if (mbr && mbr.length !== 440) throw new Error(`bootloader mbr.bin is ${mbr.length} bytes, not 440`);

  step('partition', `${disk.device}: GPT (${layout.partitions.map((p) => p.name).join(', ')})${held ? `, replacing ${held}` : ''}`);
  // From the first write on, the install runs to its end (a cancel is no longer honoured),
  // and a failure erases the tables again: a half-installed disk must not look bootable.
  try {
    await writeDisk(plan, layout, mbr, progress);
  } catch (err) {
    try {
      zeroEnds(disk.device, 1 << 20);
      const fd = fs.openSync(disk.device, 'r');
      try {
        rereadPartitions(fd, disk.device);
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      // the original error is what matters
    }
    throw err;
  }
}

/** Zeroes the first and last `bytes` of a device (or a whole partition smaller than twice that). */
export function zeroEnds(device: string, bytes: number): void {
  const fd = fs.openSync(device, 'r+');
  try {
    const size = fs.fstatSync(fd).isBlockDevice() ? Number(fs.readFileSync(`/sys/class/block/${path.basename(fs.realpathSync(device))}/size`, 'latin1')) * 512 : fs.fstatSync(fd).size;
    const zero = Buffer.alloc(Math.min(bytes, 4 << 20));
    for (const start of [0, Math.max(0, size - bytes)]) {
      for (let off = start; off < Math.min(size, start + bytes); off += zero.length) fs.writeSync(fd, zero, 0, Math.min(zero.length, size - off), off);
    }
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** `mbr`: GRUB's BIOS boot code, or none for a disk that boots with UEFI only. */
async function writeDisk(plan: InstallPlan, layout: DiskLayout, mbr: Buffer | undefined, progress: InstallProgress): Promise<void> {
  const { disk } = plan;
  const step = progress;
  const fd = fs.openSync(disk.device, 'r+');
  try {
    // Old tables and signatures go first: a stale backup GPT at the end, or a filesystem
    // signature a new partition would not overwrite, must not outlive the install.
    const zero = Buffer.alloc(1 << 20);
    fs.writeSync(fd, zero, 0, zero.length, 0);
    fs.writeSync(fd, zero, 0, zero.length, Math.max(0, disk.bytes - zero.length));
    writeGpt(fd, disk.bytes, layout);
    fs.fsyncSync(fd);
    rereadPartitions(fd, disk.device);
  } finally {
    fs.closeSync(fd);
  }
  const dev = (name: PartitionName) => partitionDevice(disk, partitionByName(layout, name).number);
  await waitForPartitions(layout.partitions.map((p) => partitionDevice(disk, p.number)));

  if (mbr) {
    step('bootloader', 'GRUB for BIOS (BIOS boot partition) and UEFI (EFI system partition)');
    await copyImage(path.join(plan.bootloaderDir, 'bios.img'), dev('BIOS'));
  } else {
    step('bootloader', 'GRUB for UEFI (EFI system partition)');
  }
  await copyImage(path.join(plan.bootloaderDir, 'efi.img'), dev('EFI'));
  if (plan.uki) {
    // Under Secure Boot the firmware runs only what is signed: systemd-boot and the UKI (GRUB's
    // EFI image, and the kernel GRUB would load, are not), as on secureboot/disk.raw.
    const uki = plan.uki;
    const bytes = fs.statSync(uki).size;
    step('bootloader', `UEFI Secure Boot: signed systemd-boot and slot A's signed UKI (${UKI_DIR}/${ukiFile('A')}) on the EFI system partition`, 0, bytes);
    await withMount(dev('EFI'), 'vfat', 'install-esp', async (esp) => {
      const sd = path.join(plan.bootloaderDir, 'sdboot');
      fs.rmSync(path.join(esp, 'EFI', 'BOOT'), { recursive: true, force: true });
      fs.mkdirSync(path.join(esp, 'EFI', 'BOOT'), { recursive: true });
      fs.copyFileSync(path.join(sd, 'BOOTX64.EFI'), path.join(esp, 'EFI', 'BOOT', 'BOOTX64.EFI'));
      fs.mkdirSync(path.join(esp, 'loader', 'keys', 'auto'), { recursive: true });
      for (const k of ['PK', 'KEK', 'db']) fs.copyFileSync(path.join(sd, 'keys', `${k}.auth`), path.join(esp, 'loader', 'keys', 'auto', `${k}.auth`));
      fs.writeFileSync(path.join(esp, LOADER_CONF), loaderConf(ukiFile('A')));
      await writeUki(esp, 'A', uki, (n) => progress('bootloader', `slot A's signed UKI`, n, bytes));
    });
  }

  const encryption = systemDiskEncryptionOf(plan.configText);
  const encrypted = (['STATE', 'EPHEMERAL'] as const).filter((l) => encryption?.[l === 'STATE' ? 'state' : 'ephemeral']);
  step('format', `xfs on BOOT, STATE and EPHEMERAL${encrypted.length ? ` (${encrypted.join(' and ')} encrypted: LUKS2, aes-xts-plain64)` : ''}`);
  const bootUuid = fs.readFileSync(path.join(plan.bootloaderDir, 'boot-uuid'), 'utf8').trim();
  await mkfsXfs(dev('BOOT'), 'BOOT', { uuid: bootUuid });
  // An encrypted volume is formatted as LUKS2 and its xfs made inside the mapping, which is
  // closed again once the configuration is on STATE.
  const volume = async (label: 'STATE' | 'EPHEMERAL'): Promise<string> => {
    const cfg = encryption?.[label === 'STATE' ? 'state' : 'ephemeral'];
    if (!cfg) {
      await mkfsXfs(dev(label), label);
      return dev(label);
    }
    // Its own mapper name: the node may have this label's volume open already (an ISO boot on a
    // machine whose installed disk is encrypted).
    const opened = formatEncrypted(dev(label), partitionByName(layout, label).sizeBytes, label, cfg, { mapper: `install-${mapperName(label)}`, ...(plan.sysRoot ? { sysRoot: plan.sysRoot } : {}) });
    await mkfsXfs(opened.device, label);
    return opened.device;
  };
  try {
    const stateDevice = await volume('STATE');
    await volume('EPHEMERAL');
    if (plan.configText !== undefined) {
      step('config', 'the machine configuration to STATE');
      await withMount(stateDevice, 'xfs', 'install-state', async (dir) => {
        fs.chmodSync(dir, 0o700);
        fs.writeFileSync(path.join(dir, CONFIG_FILE), plan.configText!, { mode: 0o600 });
      });
    }
  } finally {
    for (const label of encrypted) closeEncrypted(label, `install-${mapperName(label)}`);
  }

  const total = fs.statSync(plan.files.vmlinuz).size + fs.statSync(plan.files.initramfs).size;
  step('write', `slot A: Bronze ${plan.version}`, 0, total);
  await withMount(dev('BOOT'), 'xfs', 'install-boot', async (boot) => {
    copyTree(path.join(plan.bootloaderDir, 'grub'), path.join(boot, 'grub'));
    fs.mkdirSync(path.join(boot, 'B'), { recursive: true });
    await writeSlot(boot, 'A', plan.files, (n) => progress('write', `slot A: Bronze ${plan.version}`, n, total));
    initGrubenv(boot, { saved_entry: 'A', bronze_extra: plan.extraKernelArgs.join(' ') });
  });

  // A fresh store: nothing of an earlier install's upgrades may survive a reinstall.
  zeroEnds(dev('META'), 1 << 20);
  const meta = MetaStore.open(dev('META'));
  try {
    const time = new Date().toISOString();
    meta.set({ 'install.disk': disk.device, 'install.version': plan.version, 'install.time': time, 'slot.A.version': plan.version });
    // STATE holds a configuration with the node's identity from now on: the node never opens
    // its API again (recovery.ts). Typed documents alone give it no identity: it stays open.
    if (hasIdentity(plan.configText)) meta.set({ [META_CONFIGURED]: time });
    // How STATE opens at boot, before the configuration on it can be read.
    if (encryption?.state) meta.set({ [META_STATE_ENCRYPTION]: JSON.stringify(encryption.state) });
  } finally {
    meta.close();
  }

  // Last, GRUB's boot code in the MBR's first 440 bytes (before the partition table): only a
  // complete disk gets the code that makes BIOS firmware boot it.
  if (!mbr) return;
  const fd2 = fs.openSync(disk.device, 'r+');
  try {
    fs.writeSync(fd2, mbr, 0, 440, 0);
    fs.fsyncSync(fd2);
  } finally {
    fs.closeSync(fd2);
  }
}
