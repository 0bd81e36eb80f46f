// Repair: xfs_repair on STATE or EPHEMERAL when it did not mount at boot, each then mounted
// read-only to check it; a repair that fails says so on the volume's VolumeStatus.
import fs from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { ApiError } from '../api/common.ts';
import type { ProgressEvent, RepairOptions } from '../api/lifecycle.ts';
import { type VolumeLabel, repairAdvice } from '../volumes.ts';
import { CONFIG_FILE } from '../config/manager.ts';
import type { LifecycleContext } from './context.ts';
import { XfsRepairError, withMount, xfsRepair } from './fs-tools.ts';
import { volumeFailed } from './status.ts';
import { WIPEABLE } from './wipe.ts';

/**
 * xfs_repair on system volumes that did not mount at boot (the node left them untouched),
 * each then mounted read-only to check it; resolves when the node is ready to reboot (and
 * mount them). Refused for a volume that is mounted (it works; xfs_repair cannot run on it)
 * or not on a disk.
 */
export function repair(ctx: LifecycleContext, o: RepairOptions, progress: (p: ProgressEvent) => void, signal: AbortSignal): Promise<void> {
  const labels = [...new Set(o.labels.map((l) => l.trim().toUpperCase()))];
  const bad = labels.filter((l) => !(WIPEABLE as readonly string[]).includes(l));
  if (labels.length === 0) return Promise.reject(new ApiError(grpc.status.INVALID_ARGUMENT, `name the volumes to repair (${WIPEABLE.join(', ')})`));
  if (bad.length) return Promise.reject(new ApiError(grpc.status.INVALID_ARGUMENT, `cannot repair ${bad.join(', ')}: only ${WIPEABLE.join(' and ')} can be repaired`));
  return ctx.exclusive('repair', async () => {
    const vols = ctx.o.volumes();
    const targets: Array<{ label: VolumeLabel; dev: string }> = [];
    for (const label of labels as VolumeLabel[]) {
      const part = vols?.disk?.partitions[label]?.device;
      if (!part) throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot repair ${label}: there is no ${label} partition on a disk (it is memory-backed)`);
      const m = vols?.mounted.find((x) => x.label === label);
      if (m) throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot repair ${label}: it is mounted at ${m.target} and works; xfs_repair runs only on a volume that did not mount`);
      // An encrypted volume's xfs is inside its dm-crypt mapping, which boot opened if it could.
      const status = vols?.statuses[label];
      const opened = status?.encryptionProvider === 'luks2' ? status.mountLocation : part;
      if (!opened || (opened === part && status?.encryptionProvider === 'luks2')) {
        throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot repair ${label}: it is encrypted and was not opened (${status?.errorMessage ?? 'no key opened it'}); xfs_repair needs it open`);
      }
      targets.push({ label, dev: opened });
    }
    const report = ctx.steps('repair', progress);
    ctx.o.log.warn(`repair: start: ${targets.map((t) => `${t.label} (${t.dev})`).join(', ')}${o.zeroLog ? ', zeroing a dirty log (-L)' : ''}`);
    const repairFs = ctx.o.repairFs ?? ((dev, r) => xfsRepair(dev, r));
    const check = ctx.o.mountCheck ?? (<T>(dev: string, fn: (dir: string) => Promise<T>) => withMount(dev, 'xfs', 'repair-check', fn, { readOnly: true }));
    for (const { label, dev } of targets) {
      if (signal.aborted) throw new ApiError(grpc.status.CANCELLED, `repair cancelled before ${label}`);
      report('repair', `${label} (${dev}): xfs_repair${o.zeroLog ? ' -L' : ''}`);
      try {
        await repairFs(dev, { zeroLog: o.zeroLog, onLine: (line) => progress({ stage: 'repair', message: `${label}: ${line}` }) });
      } catch (err) {
        const msg = (err as Error).message;
        const advice = err instanceof XfsRepairError && err.dirtyLog
          ? `its log holds changes that only a mount can replay, and it does not mount: repair it with --zero-log (those changes are lost), or erase it with \`bronzectl reset --system-labels-to-wipe ${label} --reboot\``
          : `erase it with \`bronzectl reset --system-labels-to-wipe ${label} --reboot\``;
        ctx.o.log.error(`repair: ${label} (${dev}): ${msg}; ${advice}`);
        await volumeFailed(ctx, label, `xfs_repair failed: ${msg}; ${advice}`);
        throw new ApiError(err instanceof XfsRepairError && err.dirtyLog ? grpc.status.FAILED_PRECONDITION : grpc.status.DATA_LOSS, `repair of ${label} (${dev}) failed: ${msg}; ${advice}`, { cause: err });
      }
      report('verify', `${label} (${dev}): mounting it read-only`);
      const holds = await check(dev, async (dir) => (label === 'STATE' ? fs.existsSync(path.join(dir, CONFIG_FILE)) : true)).catch(async (err: Error) => {
        ctx.o.log.error(`repair: ${label} (${dev}) still does not mount: ${err.message}`);
        await volumeFailed(ctx, label, `repaired by xfs_repair, but it still does not mount: ${err.message}; ${repairAdvice(label).replace(/^repair it with .*?, or /, '')}`);
        throw new ApiError(grpc.status.DATA_LOSS, `${label} (${dev}) still does not mount after xfs_repair: ${err.message}; erase it with \`bronzectl reset --system-labels-to-wipe ${label} --reboot\``, { cause: err });
      });
      report('verify', `${label} (${dev}) mounts again${label === 'STATE' ? (holds ? ' and holds a machine configuration' : ', but holds no machine configuration: the node comes back waiting for one (`bronzectl apply-config` with your client configuration)') : ''}`);
    }
    report('reboot', `repaired ${targets.map((t) => t.label).join(', ')}: rebooting to mount ${targets.length > 1 ? 'them' : 'it'}`);
  });
}
