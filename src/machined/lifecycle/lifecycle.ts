// machined's lifecycle operations on the node's disk: install (machine.install.disk at boot,
// or the Install RPC), upgrade (a signed image into the inactive slot, booted once), the
// commit of a tried slot once the node is Running, rollback, reset (wiping STATE and
// EPHEMERAL after services are stopped and the volumes unmounted), and repair (xfs_repair on a
// volume that did not mount). One operation at a time; each step of each is logged to the
// console (and `logs machined`), not only sent to the client.
//
// What must survive a power cut is in META, not in memory: a wipe asked for (an upgrade
// without --preserve, a reset) is recorded before GRUB is armed or the reboot starts, and
// carried out at the next boot if the reboot never got to it (wipeRecordedVolumes).
//
// This class only wires machined's options to the operations, one file each: install.ts,
// upgrade.ts (with fetch-image.ts), rollback.ts, reset.ts and wipe.ts, repair.ts, commit.ts
// (boot and the tried slot's commit); what they share is in context.ts, what they publish in
// status.ts.
import type { InstallOptions, Lifecycle, ProgressEvent, RepairOptions, ResetOptions, UpgradeOptions, UpgradeOutcome } from '../api/lifecycle.ts';
import type { VolumeLabel } from '../volumes.ts';
import { abandonTrial, boot, running } from './commit.ts';
import { LifecycleContext, type NodeLifecycleOptions } from './context.ts';
import { install, installNotice, maybeInstall } from './install.ts';
import { repair } from './repair.ts';
import { checkReset, reset } from './reset.ts';
import { checkRollback, rollback } from './rollback.ts';
import { upgrade } from './upgrade.ts';
import { wipePending } from './wipe.ts';

export type { NodeLifecycleOptions, StatusSink } from './context.ts';
export { installSettings } from './install.ts';
export { lastChange } from './status.ts';
export { META_WIPE_PENDING, META_WIPE_REASON, WIPEABLE, wipeRecordedVolumes } from './wipe.ts';

export class NodeLifecycle implements Lifecycle {
  private readonly ctx: LifecycleContext;

  constructor(o: NodeLifecycleOptions) {
    this.ctx = new LifecycleContext(o);
  }

  /**
   * Called as a reboot or shutdown begins, before services stop: no new operation starts, and
   * one under way (an upgrade writing its slot, an install partitioning) is waited for, so
   * that nothing is unmounted under it.
   */
  quiesce(): Promise<void> {
    return this.ctx.quiesce();
  }

  // ---- boot and commit -----------------------------------------------------------------

  /** At boot, before services: the boot status, and the clock of a tried slot. */
  boot(): Promise<void> {
    return boot(this.ctx);
  }

  /** Every service is Running and healthy: a tried slot becomes the known-good one. */
  running(): Promise<void> {
    return running(this.ctx);
  }

  /**
   * Something the tried slot must run failed for good (a declared container that does not come
   * up healthy): give the trial up now rather than when its clock runs out. No-op once committed
   * or when the booted slot is not on trial.
   */
  abandonTrial(reason: string): boolean {
    return abandonTrial(this.ctx, reason);
  }

  // ---- install -------------------------------------------------------------------------

  /** Whether a configuration's machine.install would start an install now; what ApplyConfiguration's reply says. */
  installNotice(configText: string | undefined): string | undefined {
    return installNotice(this.ctx, configText);
  }

  /** The configuration names an install disk and the node is not installed: install, then reboot. */
  maybeInstall(configText: string | undefined): Promise<void> {
    return maybeInstall(this.ctx, configText);
  }

  // ---- the API ---------------------------------------------------------------------------

  install(o: InstallOptions, progress: (p: ProgressEvent) => void, signal: AbortSignal): Promise<void> {
    return install(this.ctx, o, progress, signal);
  }

  upgrade(o: UpgradeOptions, upload: AsyncIterable<Buffer> | undefined, size: number, progress: (p: ProgressEvent) => void, signal: AbortSignal): Promise<UpgradeOutcome> {
    return upgrade(this.ctx, o, upload, size, progress, signal);
  }

  reboot(reason: string, actorId: string): void | Promise<void> {
    this.ctx.o.log.info(`reboot: ${reason}`);
    return this.ctx.o.requestSequence('reboot', reason, actorId);
  }

  reset(o: ResetOptions, actorId: string): Promise<void> {
    return reset(this.ctx, o, actorId);
  }

  checkRollback(): Promise<void> {
    return checkRollback(this.ctx);
  }

  checkReset(): Promise<void> {
    return checkReset(this.ctx);
  }

  rollback(actorId: string): Promise<void> {
    return rollback(this.ctx, actorId);
  }

  repair(o: RepairOptions, progress: (p: ProgressEvent) => void, signal: AbortSignal): Promise<void> {
    return repair(this.ctx, o, progress, signal);
  }

  // ---- wipes -----------------------------------------------------------------------------

  /** The volumes the next reboot or shutdown wipes. */
  get pendingWipes(): VolumeLabel[] {
    return [...this.ctx.pendingWipe];
  }

  /** In the reboot and shutdown sequences, after the volumes are unmounted: the wipes asked for. */
  wipePending(): Promise<void> {
    return wipePending(this.ctx);
  }
}
