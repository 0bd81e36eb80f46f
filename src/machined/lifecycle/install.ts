// Install: Bronze written to a disk, from machine.install.disk in the configuration (at boot,
// or when a configuration naming one is applied) or the Install RPC. The booted slot's files
// come from the boot media (the ISO's /boot/{vmlinuz,initramfs.xz}) or a signed image from a
// URL (a PXE-booted node has no media to copy from). A node that booted Bronze's signed UKI
// through systemd-boot (Secure Boot) installs systemd-boot and the UKI for UEFI instead of GRUB:
// the UKI comes from the media's /boot/bronze.efi (secureboot/bronze.iso) or the image's bronze.efi. What an install that failed after the
// reply left behind stays visible: the MachineStatus condition 'install', BootStatus's
// `install`, and the console.
import fs from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { installOfText } from '../../config/accessors/install.ts';
import { validated } from '../config/parsed.ts';
import { UpgradeImageError } from '../../install/image.ts';
import { VERSION } from '../../version.ts';
import { ApiError } from '../api/common.ts';
import type { InstallOptions, ProgressEvent } from '../api/lifecycle.ts';
import { MS, mount, umount } from '../../lib/sys.ts';
import { openReader } from '../../disk/block-reader.ts';
import { probeFilesystem } from '../../disk/superblocks.ts';
import type { LifecycleContext } from './context.ts';
import { type BlockDisk, DiskError, listDisks, resolveDisk } from './disks.ts';
import { fetchVerified } from './fetch-image.ts';
import { checkInstallDisk, installToDisk } from './installer.ts';
import { EFIVARS, bootedBronzeUki } from './sdboot.ts';
import type { SlotFiles } from './slots.ts';
import { publishStatus } from './status.ts';

/** The install settings of a configuration (v1alpha1 machine.install, or an UnattendedInstallConfig naming a disk). */
export function installSettings(text: string | undefined): InstallOptions | undefined {
  if (!text) return undefined;
  // A valid configuration's install settings, as the validator read them; the raw reading for
  // text that does not validate (an install named there is still refused visibly, not ignored).
  const r = validated(text);
  const inst = r.ok ? r.config.install : installOfText(text);
  return inst ? { disk: inst.disk, wipe: inst.wipe, image: inst.image ?? '', extraKernelArgs: inst.extraKernelArgs } : undefined;
}

/**
 * Whether a configuration's machine.install would start an install now (the node is not
 * installed, and these settings were not tried yet); what ApplyConfiguration's reply says.
 */
export function installNotice(ctx: LifecycleContext, configText: string | undefined): string | undefined {
  const inst = installSettings(configText);
  if (!inst || ctx.disk() || ctx.busy || JSON.stringify(inst) === ctx.lastInstallKey) return undefined;
  return `An install to ${inst.disk} starts now; the node reboots into it when it is done. Follow it with \`bronzectl get machinestatus\` or \`bronzectl get bootstatus\` (a failure shows there and on the console).`;
}

/**
 * The configuration names an install disk and the node is not installed: install, then
 * reboot. Settings already tried are not tried again by themselves (a live change to another
 * part of the configuration must not start an install again); changed settings, or the
 * Install RPC, try again.
 */
export async function maybeInstall(ctx: LifecycleContext, configText: string | undefined): Promise<void> {
  const inst = installSettings(configText);
  if (!inst) return;
  const key = JSON.stringify(inst);
  if (key === ctx.lastInstallKey) return;
  const disk = ctx.disk();
  if (disk) {
    ctx.o.log.info(`machine.install.disk ${inst.disk}: already installed (running from ${disk.device})`);
    return;
  }
  ctx.lastInstallKey = key;
  ctx.o.log.info(`machine.install.disk ${inst.disk}: installing`);
  try {
    await ctx.exclusive('install', () => runInstall(ctx, inst, () => {}, new AbortController().signal, true));
  } catch {
    return; // install() logged and recorded it
  }
  ctx.o.log.info('install done: rebooting into the installed disk');
  await ctx.o.requestSequence('reboot', 'install finished', '');
}

/** A failed install stays visible: the console, MachineStatus ('install'), BootStatus. */
async function installFailed(ctx: LifecycleContext, disk: string, err: unknown): Promise<void> {
  const msg = (err as Error)?.message ?? String(err);
  ctx.lastInstall = { state: 'failed', disk, error: msg, time: new Date().toISOString() };
  ctx.o.log.error(`install to ${disk} failed: ${msg}`);
  ctx.o.log.error(`the node keeps running as it is (not installed): fix machine.install and apply the configuration again, or run \`bronzectl install --disk <disk>\``);
  await ctx.o.status?.report('install', [`install to ${disk} failed: ${msg}`]);
  await publishStatus(ctx);
}

export function install(ctx: LifecycleContext, o: InstallOptions, progress: (p: ProgressEvent) => void, signal: AbortSignal): Promise<void> {
  return ctx.exclusive('install', () => runInstall(ctx, o, progress, signal, false));
}

/**
 * An install, logged step by step. Its failure is recorded (console, MachineStatus 'install',
 * BootStatus) when nobody else would see it: always for one machine.install started (it runs
 * after ApplyConfiguration's reply), and for an Install call once it has begun (its checks
 * passed); a call refused by its checks (no such disk, one holding data, too small, the node's
 * own) is answered with the refusal, and logged.
 */
async function runInstall(ctx: LifecycleContext, o: InstallOptions, progress: (p: ProgressEvent) => void, signal: AbortSignal, fromConfig: boolean): Promise<void> {
  const report = ctx.steps('install', progress);
  const stageBefore = ctx.o.status?.stage;
  let began = false;
  const begin = async () => {
    began = true;
    ctx.lastInstall = { state: 'running', disk: o.disk, time: new Date().toISOString() };
    await ctx.o.status?.report('install', []);
    await ctx.o.status?.setStage('installing');
    await publishStatus(ctx);
  };
  ctx.o.log.info(`install: start: to ${o.disk}${o.wipe ? ' (wipe)' : ''} from ${o.image || 'the boot media'}`);
  try {
    await installTo(ctx, o, report, signal, begin);
  } catch (err) {
    if (began && stageBefore) await ctx.o.status?.setStage(stageBefore);
    if (began || fromConfig) await installFailed(ctx, o.disk, err);
    else ctx.o.log.warn(`install to ${o.disk} refused: ${(err as Error).message}`);
    throw err;
  }
  ctx.lastInstall = { state: 'done', disk: o.disk, time: new Date().toISOString() };
  await publishStatus(ctx);
}

async function installTo(ctx: LifecycleContext, o: InstallOptions, report: (stage: string, message: string, done?: number, total?: number) => void, signal: AbortSignal, begin: () => Promise<void>): Promise<void> {
  const disk: BlockDisk = resolveDisk(o.disk);
  const own = ctx.o.volumes()?.disk;
  if (own && own.device === disk.device) {
    throw new ApiError(grpc.status.FAILED_PRECONDITION, `${disk.device} is this node's own disk, which it runs from: use upgrade to change its image`);
  }
  // A second Bronze disk would share BOOT's filesystem UUID, and GRUB and machined could
  // pick different ones.
  if (ctx.disk()) throw new ApiError(grpc.status.FAILED_PRECONDITION, `this node is already installed (on ${ctx.disk()!.device}): it installs to one disk only`);
  const stage = path.join(ctx.o.stageRoot ?? '/var/lib/bronze', 'install');
  // The disk first: no download for a disk that will be refused.
  await checkInstallDisk(disk, o.wipe);
  await begin();
  let source;
  try {
    source = await installSource(ctx, o.image, stage, report, signal);
  } catch (err) {
    if (err instanceof UpgradeImageError) throw new Error(`install image refused: ${err.message}`, { cause: err });
    throw err;
  }
  const { files, version, cleanup, device, uki } = source;
  try {
    if (device === disk.device) throw new DiskError(`${disk.device} is the media the node booted from (the install copies from it)`);
    // Booted through systemd-boot from Bronze's signed UKI (Secure Boot media): the disk must
    // boot the same way, or the firmware that enforces Secure Boot would refuse GRUB.
    const sdBooted = bootedBronzeUki(ctx.o.efivars ?? EFIVARS);
    if (sdBooted && !uki) {
      throw new ApiError(
        grpc.status.FAILED_PRECONDITION,
        `this node booted Bronze's signed UKI (${sdBooted}) through systemd-boot, so the disk must get one for its ESP, and ${o.image ? `the image ${o.image}` : 'the boot media'} has none (bronze.efi): install from secureboot/bronze.iso, or with the Secure Boot image (secureboot/upgrade.tar)`,
      );
    }
    await installToDisk(
      { disk, wipe: o.wipe, files, version, extraKernelArgs: o.extraKernelArgs, configText: ctx.o.configText(), bootloaderDir: ctx.bootloaderDir, signal, ...(sdBooted ? { uki } : {}) },
      report,
    );
  } finally {
    await cleanup();
  }
  report('reboot', `installed Bronze to ${disk.device}`);
}

/** The kernel and initramfs an install writes to slot A. */
async function installSource(ctx: LifecycleContext, image: string, stage: string, report: (s: string, m: string, d?: number, t?: number) => void, signal: AbortSignal): Promise<{ files: SlotFiles; version: string; cleanup: () => Promise<void>; device?: string; uki?: string }> {
  if (image) {
    const v = await fetchVerified(ctx, image, undefined, 0, stage, report, signal);
    const uki = v.files['bronze.efi'];
    return { files: { vmlinuz: v.files.vmlinuz, initramfs: v.files['initramfs.xz'], roothash: v.manifest.roothash }, version: v.manifest.version, cleanup: async () => fs.rmSync(stage, { recursive: true, force: true }), ...(uki ? { uki } : {}) };
  }
  // The boot media: the ISO (iso9660 labelled BRONZE), mounted read-only for the copy.
  for (const d of listDisks()) {
    const r = await openReader(d.device, d.bytes).catch(() => undefined);
    if (!r) continue;
    const fsys = await probeFilesystem(r).finally(() => r.close());
    if (fsys?.type !== 'iso9660' || fsys.label !== 'BRONZE') continue;
    report('source', `the boot media ${d.device} (Bronze ${VERSION.tag})`);
    const dir = path.join('/run/bronze/mnt', 'media');
    fs.mkdirSync(dir, { recursive: true });
    mount(d.device, dir, 'iso9660', MS.RDONLY | MS.NOSUID | MS.NODEV | MS.NOEXEC);
    const roothash = fs.readFileSync(path.join(dir, 'boot', 'roothash'), 'utf8').trim();
    // The Secure Boot media (secureboot/bronze.iso) carries the signed UKI for the ESP as well.
    const uki = path.join(dir, 'boot', 'bronze.efi');
    return { files: { vmlinuz: path.join(dir, 'boot', 'vmlinuz'), initramfs: path.join(dir, 'boot', 'initramfs.xz'), roothash }, version: VERSION.tag, cleanup: async () => umount(dir), device: d.device, ...(fs.existsSync(uki) ? { uki } : {}) };
  }
  throw new ApiError(grpc.status.FAILED_PRECONDITION, 'no install source: the node did not boot from the Bronze ISO; give an image URL (machine.install.image, or bronzectl install --image)');
}

