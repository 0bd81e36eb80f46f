// Rollback: back to the other slot. From a slot still on trial it is a plain reboot (GRUB's
// default is still the other slot); from a committed slot, the other one is booted once and
// becomes the default when it is Running, like an upgrade's trial (under systemd-boot, through
// its one-shot entry: sdboot.ts).
import * as grpc from '@grpc/grpc-js';
import { ApiError } from '../api/common.ts';
import type { LifecycleContext } from './context.ts';
import { UKI_DIR, ukiFile, ukiPresent } from './sdboot.ts';
import { otherSlot, slotPresent } from './slots.ts';

export async function checkRollback(ctx: LifecycleContext): Promise<void> {
  ctx.refuseIfBusy('roll back');
  const { disk, booted } = ctx.installedOrThrow('roll back');
  const target = otherSlot(booted);
  const present = await ctx.withBoot(disk, async (dir) => slotPresent(dir, target));
  if (!present) throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot roll back: slot ${target} holds no image (nothing was installed there before slot ${booted})`);
  const sd = ctx.sdBoot();
  if (sd && !(await ctx.withEsp(disk, async (esp) => ukiPresent(esp, target)))) {
    throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot roll back: this node boots through systemd-boot, and the EFI system partition holds no UKI for slot ${target} (${UKI_DIR}/${ukiFile(target)})`);
  }
}

export function rollback(ctx: LifecycleContext, actorId: string): Promise<void> {
  return ctx.exclusive('rollback', async () => {
    const { disk, booted } = ctx.installedOrThrow('roll back');
    const target = otherSlot(booted);
    ctx.o.log.warn(`rollback: start: from slot ${booted} to slot ${target}`);
    if (!ctx.committed) {
      // On trial: GRUB's default is still the other slot, a reboot is the rollback.
      ctx.committed = true; // and this slot must not become the default meanwhile
      clearTimeout(ctx.trialTimer);
      ctx.setMeta(disk, { 'rollback.from': booted, 'rollback.to': target, 'rollback.version': ctx.meta(disk)[`slot.${target}.version`] ?? '', 'rollback.state': 'trying', 'rollback.time': new Date().toISOString() });
      ctx.o.log.warn(`rollback: slot ${booted} is on trial; rebooting into the default slot ${target}`);
      void ctx.o.requestSequence('reboot', `rollback to slot ${target}`, actorId);
      return;
    }
    const sd = ctx.sdBoot();
    if (sd && !(await ctx.withEsp(disk, async (esp) => ukiPresent(esp, target)))) {
      throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot roll back: the EFI system partition holds no UKI for slot ${target} (${UKI_DIR}/${ukiFile(target)})`);
    }
    await ctx.withBoot(disk, async (dir) => {
      if (!slotPresent(dir, target)) throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot roll back: slot ${target} holds no image`);
      ctx.setMeta(disk, { 'rollback.from': booted, 'rollback.to': target, 'rollback.version': ctx.meta(disk)[`slot.${target}.version`] ?? '', 'rollback.state': 'trying', 'rollback.time': new Date().toISOString() });
      // A trial like an upgrade's: the old slot becomes the default once it is Running, and
      // if it no longer boots (a failed upgrade left there), GRUB comes back here.
      try {
        ctx.armBootOnce(dir, target);
      } catch (err) {
        ctx.setMeta(disk, { 'rollback.state': 'failed', 'rollback.failed': new Date().toISOString(), 'rollback.error': (err as Error).message });
        throw err;
      }
    });
    ctx.o.log.warn(`rollback: arm: slot ${target} (${ctx.meta(disk)[`slot.${target}.version`] ?? 'unknown version'}) boots once next, and becomes the default when Running; rebooting`);
    void ctx.o.requestSequence('reboot', `rollback to slot ${target}`, actorId);
  });
}
