// Reset: STATE and EPHEMERAL (or the labels asked for) are wiped after services are stopped
// and the volumes unmounted, then the node reboots into maintenance mode or powers off. The
// wipe is recorded in META before the sequence starts; wipe.ts carries it out. A reset that
// wipes STATE also removes, in that same write, META's record that the node was configured
// and its recovery identity (recovery.ts): the node comes back open, in maintenance mode.
import * as grpc from '@grpc/grpc-js';
import { ApiError } from '../api/common.ts';
import type { ResetOptions } from '../api/lifecycle.ts';
import type { VolumeLabel } from '../volumes.ts';
import type { LifecycleContext } from './context.ts';
import { WIPEABLE, wipeRecord } from './wipe.ts';
import { META_CONFIGURED, META_RECOVERY } from '../../install/meta.ts';

/** What a reset of `labels` removes from META besides the wipe record: the configuration record goes with STATE. */
export function resetForgets(labels: readonly string[]): string[] {
  return labels.includes('STATE') ? [META_CONFIGURED, META_RECOVERY] : [];
}

export function reset(ctx: LifecycleContext, o: ResetOptions, actorId: string): Promise<void> {
  const labels = (o.labels.length ? o.labels : WIPEABLE).map((l: string) => l.toUpperCase());
  const bad = labels.filter((l) => !(WIPEABLE as readonly string[]).includes(l));
  if (bad.length) return Promise.reject(new ApiError(grpc.status.INVALID_ARGUMENT, `cannot wipe ${bad.join(', ')}: only ${WIPEABLE.join(' and ')} can be wiped`));
  return ctx.exclusive('reset', async () => {
    const disk = ctx.o.volumes()?.disk;
    ctx.o.log.warn(`reset: start: wiping ${labels.join(', ')}, then ${o.reboot ? 'rebooting into maintenance mode' : 'powering off'}`);
    for (const l of labels as VolumeLabel[]) {
      if (disk?.partitions[l]?.device) ctx.pendingWipe.add(l);
      else ctx.o.log.warn(`reset: no ${l} partition on a disk: ${l} is memory-backed and goes with the ${o.reboot ? 'reboot' : 'power-off'}`);
    }
    // Recorded before the sequence starts: a power cut before the wipe does not undo the reset.
    if (disk && ctx.pendingWipe.size) {
      try {
        const w = wipeRecord(ctx, disk, [...ctx.pendingWipe], `reset (${labels.join(', ')})`);
        ctx.setMeta(disk, w.set, [...w.remove, ...resetForgets([...ctx.pendingWipe])]);
      } catch (err) {
        ctx.o.log.warn(`reset: recording the wipe in META: ${(err as Error).message}`);
      }
    }
    await ctx.o.status?.setStage('resetting');
    void ctx.o.requestSequence(o.reboot ? 'reboot' : 'shutdown', `reset (${labels.join(', ')})`, actorId);
  });
}

export async function checkReset(ctx: LifecycleContext): Promise<void> {
  ctx.refuseIfBusy('reset');
}
