// What the lifecycle publishes: the BootStatus resource (the slots on BOOT, what META records
// of the last install, upgrade and rollback) and the VolumeStatus of STATE and EPHEMERAL, with
// the machine's 'volumes' condition for those that failed.
import { BOOT_STATUS_ID, bootStatusDefinition } from '../../contract/resources/boot-status.ts';
import { VERSION } from '../../version.ts';
import type { VolumeLabel } from '../volumes.ts';
import { VOLUME_STATUS_NAMESPACE, VOLUME_STATUS_TYPE, type VolumeStatusSpec } from '../volume-status.ts';
import type { LifecycleContext } from './context.ts';
import { type BootSnapshot, bootSnapshot, nextBoot } from './slots.ts';

/** The latest upgrade or rollback META records, in a few words (BootStatus's `last`, a table column). */
export function lastChange(meta: Record<string, string>): string | undefined {
  const up = meta['upgrade.state'] ? { at: meta['upgrade.time'] ?? '', text: `upgrade ${meta['upgrade.from'] ?? '?'}->${meta['upgrade.to'] ?? '?'} (${meta['upgrade.version'] ?? '?'}) ${meta['upgrade.state']}` } : undefined;
  const back = meta['rollback.to'] ? { at: meta['rollback.time'] ?? '', text: `rollback ${meta['rollback.from'] ?? '?'}->${meta['rollback.to']}${meta['rollback.version'] ? ` (${meta['rollback.version']})` : ''} ${meta['rollback.state'] ?? 'committed'}` } : undefined;
  if (!up || !back) return (up ?? back)?.text;
  return (back.at > up.at ? back : up).text;
}

/** The VolumeStatus of STATE and EPHEMERAL, and the machine's 'volumes' condition for those that failed. */
export async function publishVolumes(ctx: LifecycleContext): Promise<void> {
  const statuses = ctx.o.volumes()?.statuses ?? {};
  const failed: string[] = [];
  for (const [label, spec] of Object.entries(statuses) as Array<[VolumeLabel, VolumeStatusSpec]>) {
    await ctx.publisher.apply(VOLUME_STATUS_NAMESPACE, VOLUME_STATUS_TYPE, label, JSON.parse(JSON.stringify(spec)));
    if (spec.phase === 'failed') failed.push(`${label} ${spec.location ? `(${spec.location}) ` : ''}failed: ${spec.errorMessage ?? 'not mounted'}`);
  }
  await ctx.o.status?.report('volumes', failed);
}

/** Updates a failed volume's VolumeStatus error (and the machine's condition). */
export async function volumeFailed(ctx: LifecycleContext, label: VolumeLabel, error: string): Promise<void> {
  const statuses = ctx.o.volumes()?.statuses;
  const spec = statuses?.[label];
  if (!spec) return;
  spec.errorMessage = error;
  await publishVolumes(ctx);
}

/** The BootStatus resource, from `snap` when the caller just read BOOT (else BOOT is read). */
export async function publishStatus(ctx: LifecycleContext, snap?: BootSnapshot): Promise<void> {
  const disk = ctx.disk();
  const booted = ctx.bootedSlot();
  let spec: Record<string, unknown> = { installed: false, booted: booted ?? '', version: VERSION.tag, ...(ctx.lastInstall ? { install: { ...ctx.lastInstall } } : {}) };
  if (disk) {
    try {
      const { vars, present, failure } = snap ?? (await ctx.withBoot(disk, async (dir) => bootSnapshot(dir)));
      const meta = ctx.meta(disk);
      spec = {
        installed: true,
        disk: disk.device,
        booted: booted ?? '',
        version: VERSION.tag,
        default: nextBoot(vars).good,
        next: vars.get('next_entry') ?? '',
        slots: Object.fromEntries((['A', 'B'] as const).map((s) => [s, { present: present[s], version: meta[`slot.${s}.version`] ?? '', ...(failure[s] ? { failure: failure[s] } : {}) }])),
        upgrade: meta['upgrade.state'] ? { state: meta['upgrade.state'], from: meta['upgrade.from'], to: meta['upgrade.to'], version: meta['upgrade.version'], time: meta['upgrade.time'], error: meta['upgrade.error'] } : undefined,
        rollback: meta['rollback.to'] ? { state: meta['rollback.state'] ?? 'committed', from: meta['rollback.from'], to: meta['rollback.to'], version: meta['rollback.version'], time: meta['rollback.time'], error: meta['rollback.error'] } : undefined,
        last: lastChange(meta),
      };
    } catch (err) {
      ctx.o.log.warn(`boot status: ${(err as Error).message}`);
    }
  }
  await ctx.publisher.apply(bootStatusDefinition.defaultNamespace, bootStatusDefinition.type, BOOT_STATUS_ID, JSON.parse(JSON.stringify(spec)));
}
