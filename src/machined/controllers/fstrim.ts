// FilesystemTrimController: a periodic fstrim of the node's volumes, from Talos's
// FilesystemTrimConfig document (the interval; optional chunks of chunkSize bytes with
// chunkDelay between them; free extents shorter than minLength left alone) and the per-volume
// `trim` of a VolumeConfig (enabled, interval). As in Talos, each volume is trimmed at a stable,
// hash-derived offset within the interval, different for each node and volume, and nothing is
// trimmed without the document unless a volume enables it. A filesystem that cannot be trimmed
// (tmpfs when the node has no disk) is skipped with a note.
import { createHash } from 'node:crypto';
import type { Logger } from '../../lib/log.ts';
import type { Controller } from '../../state/controller.ts';
import { filesystemTrim, volumeTrim } from '../../config/accessors/volumes.ts';
import { parseByteSize } from '../../config/fields.ts';
import { parseGoDuration } from '../../config/formats.ts';
import { MACHINE_CONFIG_ID, MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, type MachineConfigSpec, type TypedMachineConfig } from '../../contract/resources/machine-config.ts';

/** Talos's default interval: a week. */
export const DEFAULT_TRIM_INTERVAL_MS = 168 * 3_600_000;

export interface TrimVolume {
  label: string;
  mountpoint: string;
}

export interface TrimPlan {
  label: string;
  mountpoint: string;
  intervalMs: number;
  chunkSize?: number;
  chunkDelayMs: number;
  minLength?: number;
}

/** What to trim, and how often, from the configuration (pure). */
export function trimPlans(spec: TypedMachineConfig | undefined, volumes: readonly TrimVolume[]): TrimPlan[] {
  const global = filesystemTrim(spec);
  const globalInterval = global ? (global.interval !== undefined ? (parseGoDuration(global.interval) ?? 0) : DEFAULT_TRIM_INTERVAL_MS) : 0;
  const plans: TrimPlan[] = [];
  for (const v of volumes) {
    const trim = volumeTrim(spec, v.label);
    const own = trim?.interval !== undefined ? parseGoDuration(trim.interval) : undefined;
    const intervalMs = own ?? (globalInterval || (trim?.enabled ? DEFAULT_TRIM_INTERVAL_MS : 0));
    const enabled = trim?.enabled ?? globalInterval > 0;
    if (!enabled || !(intervalMs > 0)) continue;
    const chunk = parseByteSize(global?.chunkSize);
    const min = parseByteSize(global?.minLength);
    plans.push({
      label: v.label,
      mountpoint: v.mountpoint,
      intervalMs,
      ...(chunk ? { chunkSize: chunk } : {}),
      chunkDelayMs: global?.chunkDelay !== undefined ? (parseGoDuration(global.chunkDelay) ?? 0) : 0,
      ...(min ? { minLength: min } : {}),
    });
  }
  return plans;
}

/** The stable offset of a volume's trim within its interval, for this node. */
export function trimOffsetMs(nodeSeed: string, label: string, intervalMs: number): number {
  const h = createHash('sha256').update(`${nodeSeed}\0${label}`).digest();
  return Number(h.readBigUInt64BE(0) % BigInt(Math.max(1, Math.floor(intervalMs))));
}

export interface FstrimDeps {
  /** The volumes that can be trimmed now (those mounted from the disk). */
  volumes: () => TrimVolume[];
  /** ioctl(FITRIM) on a range: the bytes discarded. */
  trim: (mountpoint: string, range: { start?: number; len?: number; minLength?: number }) => number;
  /** The filesystem's size in bytes (for chunks). */
  size: (mountpoint: string) => number;
  /** Stable per node (e.g. the machine's UUID). */
  nodeSeed: () => string;
  now?: () => number;
}

/** One trim of a volume, whole or in chunks; returns the bytes discarded. */
export async function trimVolume(p: TrimPlan, d: Pick<FstrimDeps, 'trim' | 'size'>, signal?: AbortSignal): Promise<number> {
  const minLength = p.minLength !== undefined ? { minLength: p.minLength } : {};
  if (!p.chunkSize) return d.trim(p.mountpoint, minLength);
  const size = d.size(p.mountpoint);
  let total = 0;
  for (let start = 0; start < size && !signal?.aborted; start += p.chunkSize) {
    if (start > 0 && p.chunkDelayMs > 0) await new Promise((r) => setTimeout(r, p.chunkDelayMs));
    total += d.trim(p.mountpoint, { start, len: p.chunkSize, ...minLength });
  }
  return total;
}

export function fstrimController(d: FstrimDeps): Controller {
  const timers = new Map<string, NodeJS.Timeout>();
  let last = '';
  const schedule = (p: TrimPlan, log: Logger) => {
    const now = (d.now ?? Date.now)();
    const offset = trimOffsetMs(d.nodeSeed(), p.label, p.intervalMs);
    let wait = offset - (now % p.intervalMs);
    if (wait <= 0) wait += p.intervalMs;
    const t = setTimeout(() => {
      trimVolume(p, d)
        .then((bytes) => log.info(`fstrim ${p.label} (${p.mountpoint}): ${bytes} bytes discarded`))
        .catch((err: Error) => log.warn(`fstrim ${p.label} (${p.mountpoint}): ${err.message}`))
        .finally(() => {
          if (timers.get(p.label) === t) schedule(p, log);
        });
    }, Math.min(wait, 2 ** 31 - 1));
    t.unref();
    timers.set(p.label, t);
  };
  return {
    name: 'FilesystemTrimController',
    inputs: [{ namespace: MACHINE_CONFIG_NS, type: MACHINE_CONFIG_TYPE, kind: 'weak' }],
    outputs: [],
    async run(ctx) {
      const cfg = await ctx.state.find<MachineConfigSpec>(MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID);
      const plans = trimPlans(cfg?.spec, d.volumes());
      const key = JSON.stringify(plans);
      if (key === last) return;
      last = key;
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
      for (const p of plans) {
        schedule(p, ctx.log);
        ctx.log.info(`fstrim ${p.label} (${p.mountpoint}): every ${Math.round(p.intervalMs / 1000)} s${p.chunkSize ? `, in chunks of ${p.chunkSize} bytes` : ''}`);
      }
    },
  };
}
