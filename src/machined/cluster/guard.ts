// Quorum safety around the lifecycle (Talos's rules for control planes): an upgrade refuses,
// unless --force, when the node's etcd member going away for the reboot would break quorum; a
// graceful reset checks that the member may leave, and leaves etcd before it wipes anything;
// a reset without --graceful does not look at etcd (Talos's escape hatch).
import type { Lifecycle, ResetOptions } from '../api/lifecycle.ts';
import type { Disruption } from '../etcd/quorum.ts';

export interface QuorumGuard {
  quorumCheck(operation: string, what: Disruption, hint: string): Promise<void>;
  isMember(): boolean;
  /** Leaves the etcd cluster (no second check), stops etcd and clears its data. */
  leave(): Promise<void>;
  log?: (msg: string) => void;
}

export function quorumGuardedLifecycle(inner: Lifecycle, guard: QuorumGuard): Lifecycle {
  const checkReset = async (o: ResetOptions) => {
    await inner.checkReset?.(o);
    if (o.graceful) await guard.quorumCheck('reset', 'leave', 'reset --graceful=false skips etcd');
  };
  return {
    upgrade: async (o, upload, size, progress, signal) => {
      if (!o.force) await guard.quorumCheck('upgrade', 'absent', '--force does it anyway');
      return inner.upgrade(o, upload, size, progress, signal);
    },
    install: (o, progress, signal) => inner.install(o, progress, signal),
    ...(inner.repair ? { repair: (o, progress, signal) => inner.repair!(o, progress, signal) } : {}),
    reboot: (reason, actorId) => inner.reboot(reason, actorId),
    reset: async (o, actorId) => {
      if (o.graceful && guard.isMember()) {
        guard.log?.('reset: leaving etcd first (graceful)');
        await guard.leave();
      }
      return inner.reset(o, actorId);
    },
    rollback: (actorId) => inner.rollback(actorId),
    ...(inner.checkRollback ? { checkRollback: () => inner.checkRollback!() } : {}),
    checkReset,
  };
}
