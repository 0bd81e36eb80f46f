// Upgrade: a signed image (a URL, or the client's upload) verified and written into the
// inactive slot, recorded in META, and GRUB armed to boot it once; commit.ts makes it the
// default once the node is Running. Without --preserve, EPHEMERAL is wiped at the reboot.
// A node that booted a slot's UKI through systemd-boot (Secure Boot, sdboot.ts) also gets the
// image's signed UKI on its ESP, and systemd-boot's one-shot entry arms it.
import fs from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { UpgradeImageError } from '../../install/image.ts';
import { ApiError } from '../api/common.ts';
import type { ProgressEvent, UpgradeOptions, UpgradeOutcome } from '../api/lifecycle.ts';
import type { LifecycleContext } from './context.ts';
import { fetchVerified } from './fetch-image.ts';
import { type BootSnapshot, bootSnapshot, otherSlot, writeSlot } from './slots.ts';
import { entryIdFor, UKI_DIR, ukiFile, writeUki } from './sdboot.ts';
import { publishStatus } from './status.ts';
import { META_WIPE_ENCRYPT, META_WIPE_PENDING, META_WIPE_REASON, wipeRecord } from './wipe.ts';

export function upgrade(ctx: LifecycleContext, o: UpgradeOptions, upload: AsyncIterable<Buffer> | undefined, size: number, progress: (p: ProgressEvent) => void, signal: AbortSignal): Promise<UpgradeOutcome> {
  return ctx.exclusive('upgrade', async () => {
    const { disk, booted } = ctx.installedOrThrow('upgrade');
    // On trial, the other slot is the only known-good one: it must not be overwritten.
    if (!ctx.committed) {
      throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot upgrade: slot ${booted} is on trial (not yet Running with every service healthy); the other slot is the known-good one and is kept until then`);
    }
    const target = otherSlot(booted);
    const report = ctx.steps('upgrade', progress);
    ctx.o.log.info(`upgrade: start: slot ${target} from ${o.image || `an upload of ${size} bytes`}${o.preserve ? '' : ', EPHEMERAL (/var) to be wiped at the reboot'}${o.stage ? ', staged' : ''}`);
    // EPHEMERAL (/var) holds the staged image: it is there on every installed node.
    const stage = path.join(ctx.o.stageRoot ?? '/var/lib/bronze', 'upgrade');
    let snap: BootSnapshot;
    try {
      let verified;
      try {
        verified = await fetchVerified(ctx, o.image, upload, size, stage, report, signal);
      } catch (err) {
        if (err instanceof UpgradeImageError) {
          const lead = err.reason === 'stage-failed' ? `cannot stage the upgrade image in ${stage}, nothing was written` : err.reason === 'read-failed' ? 'reading the upgrade image failed, nothing was written' : 'upgrade image refused, nothing was written';
          ctx.o.log.error(`upgrade: ${lead}: ${err.message}`);
          throw new Error(`${lead}: ${err.message}`, { cause: err });
        }
        throw err;
      }
      if (signal.aborted) throw new ApiError(grpc.status.CANCELLED, 'upgrade cancelled, nothing was written');
      const version = verified.manifest.version;
      const files = { vmlinuz: verified.files.vmlinuz, initramfs: verified.files['initramfs.xz'], roothash: verified.manifest.roothash };
      const sd = ctx.sdBoot();
      const uki = verified.files['bronze.efi'];
      if (sd && !uki) {
        const why = `upgrade image refused, nothing was written: this node boots slot ${booted} through systemd-boot from a signed UKI (${sd.id}), and Bronze ${version}'s image carries none (bronze.efi): upgrade it with the Secure Boot image (secureboot/upgrade.tar)`;
        ctx.o.log.error(`upgrade: ${why}`);
        throw new ApiError(grpc.status.FAILED_PRECONDITION, why);
      }
      const total = fs.statSync(files.vmlinuz).size + fs.statSync(files.initramfs).size;
      report('write', `slot ${target}: Bronze ${version}`, 0, total);
      // The slot, then META (so that a fallback is recognised, and a wipe asked for survives
      // a power cut), then GRUB's boot-once: the last write arms it, and any failure before
      // leaves GRUB as it was. BOOT is unmounted between the slot and the arming: GRUB reads
      // xfs without replaying its log, so the slot's new files must be in place on the disk
      // (a clean unmount) before GRUB is told to boot them; grubenv itself is rewritten in
      // place and synced, which GRUB sees at once.
      await ctx.withBoot(disk, async (dir) => {
        await writeSlot(dir, target, files, (n) => report('write', `slot ${target}: Bronze ${version}`, n, total));
      });
      report('write', `slot ${target}: Bronze ${version} written`, total, total);
      if (sd && uki) {
        const ukiBytes = fs.statSync(uki).size;
        const file = `${UKI_DIR}/${ukiFile(target)}`;
        report('write', `EFI system partition: ${file}, Bronze ${version}'s signed UKI`, 0, ukiBytes);
        await ctx.withEsp(disk, (esp) => writeUki(esp, target, uki, (n) => report('write', `EFI system partition: ${file}, Bronze ${version}'s signed UKI`, n, ukiBytes)));
        report('write', `EFI system partition: ${file} written`, ukiBytes, ukiBytes);
      }
      const wipe: Record<string, string> = o.preserve ? {} : wipeRecord(ctx, disk, ['EPHEMERAL'], `upgrade to Bronze ${version} in slot ${target} without --preserve`).set;
      ctx.setMeta(disk, {
        [`slot.${target}.version`]: version,
        'upgrade.from': booted,
        'upgrade.to': target,
        'upgrade.version': version,
        'upgrade.state': 'trying',
        'upgrade.time': new Date().toISOString(),
        ...wipe,
      });
      snap = await ctx.withBoot(disk, async (dir) => {
        try {
          ctx.armBootOnce(dir, target);
        } catch (err) {
          // Not armed: the wipe must not happen either.
          if (!o.preserve) ctx.setMeta(disk, {}, [META_WIPE_PENDING, META_WIPE_REASON, META_WIPE_ENCRYPT]);
          throw err;
        }
        const loader = sd ? `systemd-boot boots slot ${target} (${entryIdFor(sd.id, target)}, Bronze ${version})` : `GRUB boots slot ${target} (Bronze ${version})`;
        report('arm', `${loader} once at the next boot; it becomes the default once Running`);
        return bootSnapshot(dir);
      });
      if (o.stage) report('staged', `slot ${target} boots at the next reboot`);
      if (!o.preserve) {
        ctx.pendingWipe.add('EPHEMERAL');
        report('arm', 'EPHEMERAL (/var) will be wiped at the reboot (use --preserve to keep it); the wipe is recorded in META');
      }
    } finally {
      fs.rmSync(stage, { recursive: true, force: true });
    }
    await publishStatus(ctx, snap);
    return { staged: o.stage };
  });
}
