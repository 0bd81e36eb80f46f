// The tried slot's commit: at boot, the boot status is published and a slot on trial (booted
// once after an upgrade or a rollback) gets a clock after which machined reboots into the
// known-good slot; once every service is Running, the tried slot becomes GRUB's default.
// Also at boot: an upgrade or rollback GRUB already fell back from is recorded as failed, and
// images staged by an interrupted install or upgrade are removed.
import fs from 'node:fs';
import path from 'node:path';
import type { LifecycleContext } from './context.ts';
import { type BootSnapshot, bootSnapshot, clearSlotFailure, isSlot, nextBoot, updateGrubenv } from './slots.ts';
import { setDefaultEntry } from './sdboot.ts';
import { publishStatus, publishVolumes } from './status.ts';

/**
 * At boot, before services: publishes the boot status and, on a tried slot, starts the
 * clock after which machined gives up on it (reboots, and GRUB boots the old slot).
 * Also notices an upgrade that GRUB already fell back from.
 */
export async function boot(ctx: LifecycleContext): Promise<void> {
  clearStaleStages(ctx);
  await publishVolumes(ctx);
  const disk = ctx.disk();
  const booted = ctx.bootedSlot();
  if (!disk || !booted) return publishStatus(ctx);
  let snap: BootSnapshot | undefined;
  try {
    const sd = ctx.sdBoot();
    snap = await ctx.withBoot(disk, async (dir) => {
      let s = bootSnapshot(dir);
      // Under systemd-boot the boot-once entry is gone as soon as it was read (tried, whether it
      // came up or not): grubenv, which says the same for the boot status, follows.
      if (sd && (s.vars.has('next_entry') || s.vars.has('next_tries'))) {
        updateGrubenv(dir, { next_entry: '', next_tries: '' });
        s = bootSnapshot(dir);
      }
      // This slot's own record of an earlier failed boot is history now: it came up.
      if (s.failure[booted]) {
        ctx.o.log.warn(`slot ${booted} had failed to boot before (${s.failure[booted]}); it booted this time`);
        clearSlotFailure(dir, booted);
        s.failure[booted] = '';
      }
      return s;
    });
    const meta = ctx.meta(disk);
    const saved = nextBoot(snap.vars).good;
    /** Why the tried slot did not come up: what its preinit recorded, else that it left no record. */
    const why = (slot: string | undefined) =>
      (isSlot(slot) && snap!.failure[slot]) || `slot ${slot ?? '?'} did not boot through to machined and left no record of why (it stopped before preinit, or was cut off)`;
    if (meta['upgrade.state'] === 'trying' && meta['upgrade.to'] !== booted) {
      const error = why(meta['upgrade.to']);
      ctx.o.log.error(`upgrade to ${meta['upgrade.version'] ?? '?'} (slot ${meta['upgrade.to']}) failed: ${sd ? 'systemd-boot' : 'GRUB'} fell back to slot ${booted}: ${error}`);
      ctx.setMeta(disk, { 'upgrade.state': 'failed', 'upgrade.failed': new Date().toISOString(), 'upgrade.error': error });
    }
    if (meta['rollback.state'] === 'trying' && meta['rollback.to'] !== booted) {
      const error = why(meta['rollback.to']);
      ctx.o.log.error(`rollback to slot ${meta['rollback.to']} failed: it did not come up, ${sd ? 'systemd-boot' : 'GRUB'} is back on slot ${booted}: ${error}`);
      ctx.setMeta(disk, { 'rollback.state': 'failed', 'rollback.failed': new Date().toISOString(), 'rollback.error': error });
    } else if (meta['rollback.state'] === 'trying' && booted === saved) {
      // A rollback from a trial is a plain reboot into the default slot: done once it boots.
      ctx.setMeta(disk, { 'rollback.state': 'committed', 'rollback.committed': new Date().toISOString() });
    }
    if (booted !== saved) {
      const ms = ctx.o.trialTimeoutMs ?? 10 * 60_000;
      ctx.o.log.warn(`booted slot ${booted} on trial (the known-good slot is ${saved}): it becomes permanent once every service is Running, else machined reboots into ${saved} in ${Math.round(ms / 1000)} s`);
      ctx.trialTimer = setTimeout(() => {
        if (ctx.committed) return;
        ctx.o.log.error(`slot ${booted} did not reach Running in ${Math.round(ms / 1000)} s: rebooting into slot ${saved}`);
        void ctx.o.requestSequence('reboot', `slot ${booted} trial timed out`, '');
      }, ms);
      ctx.trialTimer.unref?.();
    } else {
      ctx.committed = true;
    }
  } catch (err) {
    ctx.o.log.warn(`boot slots: ${(err as Error).message}`);
  }
  await publishStatus(ctx, snap);
}

/**
 * Images staged by an install or upgrade that a power cut (or a crash) interrupted: nothing
 * else will ever remove them (an upgrade image is some 50 MB of /var).
 */
function clearStaleStages(ctx: LifecycleContext): void {
  const root = ctx.o.stageRoot ?? '/var/lib/bronze';
  for (const what of ['upgrade', 'install']) {
    const dir = path.join(root, what);
    try {
      if (!fs.existsSync(dir)) continue;
      const entries = fs.readdirSync(dir);
      fs.rmSync(dir, { recursive: true, force: true });
      ctx.o.log.info(`removed a stale ${what} stage ${dir} (${entries.length ? entries.join(', ') : 'empty'}), left by an ${what} that did not finish`);
    } catch (err) {
      ctx.o.log.warn(`removing the stale ${what} stage ${dir}: ${(err as Error).message}`);
    }
  }
}

/**
 * Gives up a tried slot before its clock runs out: reboots, and the boot loader, whose boot-once
 * entry is spent, boots the known-good slot. False (nothing done) when there is no trial.
 */
export function abandonTrial(ctx: LifecycleContext, reason: string): boolean {
  if (ctx.committed || !ctx.trialTimer) return false;
  clearTimeout(ctx.trialTimer);
  ctx.trialTimer = undefined;
  ctx.o.log.error(`slot ${ctx.bootedSlot() ?? '?'} on trial is given up: ${reason}; rebooting into the known-good slot`);
  void ctx.o.requestSequence('reboot', `trial given up: ${reason}`, '');
  return true;
}

/** Every service is Running and healthy: a tried slot becomes the known-good one. */
export async function running(ctx: LifecycleContext): Promise<void> {
  if (ctx.committed) return;
  const disk = ctx.disk();
  const booted = ctx.bootedSlot();
  if (!disk || !booted) return;
  const hold = ctx.o.holdCommit?.();
  if (hold) {
    if (!ctx.commitHeld) ctx.o.log.error(`commit: slot ${booted} is not made permanent: ${hold}; its trial runs out and the node falls back to the known-good slot, unless the configuration is fixed first`);
    ctx.commitHeld = true;
    return;
  }
  ctx.committed = true;
  clearTimeout(ctx.trialTimer);
  let snap: BootSnapshot | undefined;
  try {
    const sd = ctx.sdBoot();
    // systemd-boot's default first: were grubenv first and this failed, the status would name
    // a default that UEFI does not boot.
    if (sd) await ctx.withEsp(disk, async (esp) => setDefaultEntry(esp, sd.id));
    snap = await ctx.withBoot(disk, async (dir) => {
      updateGrubenv(dir, { saved_entry: booted, next_entry: '', next_tries: '' });
      return bootSnapshot(dir);
    });
    const meta = ctx.meta(disk);
    if (meta['upgrade.state'] === 'trying') ctx.setMeta(disk, { 'upgrade.state': 'committed', 'upgrade.committed': new Date().toISOString() });
    if (meta['rollback.state'] === 'trying' && meta['rollback.to'] === booted) ctx.setMeta(disk, { 'rollback.state': 'committed', 'rollback.committed': new Date().toISOString() });
    ctx.o.log.info(`commit: slot ${booted} reached Running: it is now the slot ${sd ? `systemd-boot boots (default ${sd.id})` : 'GRUB boots'}`);
  } catch (err) {
    ctx.committed = false;
    ctx.o.log.error(`committing slot ${booted}: ${(err as Error).message}`);
  }
  await publishStatus(ctx, snap);
}
