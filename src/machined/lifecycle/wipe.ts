// The wipes of STATE and EPHEMERAL that a reboot owes: asked for by a reset or an upgrade
// without --preserve, recorded in META before the reboot starts (so that a power cut does not
// undo them), done in the reboot or shutdown sequence once the volumes are unmounted
// (wipePending), or at the next boot if the reboot never got to them (wipeRecordedVolumes).
import type { Logger } from '../../lib/log.ts';
import type { NodeDisk, VolumeLabel } from '../volumes.ts';
import { MetaStore } from '../../install/meta.ts';
import type { LifecycleContext } from './context.ts';
import { mkfsXfs } from './fs-tools.ts';
import { zeroEnds } from './installer.ts';
import { DEFAULT_VOLUME_OPS } from '../volumes.ts';
import { systemDiskEncryptionOf } from '../../config/accessors/encryption.ts';
import { META_STATE_ENCRYPTION, eraseVolume, recordedStateEncryption } from '../encryption.ts';

/** The system volumes a reset may wipe (and a repair may repair). */
export const WIPEABLE: readonly VolumeLabel[] = ['STATE', 'EPHEMERAL'];

/** META keys: the volumes a reboot must wipe (comma-separated labels), and why. */
export const META_WIPE_PENDING = 'wipe.pending';
export const META_WIPE_REASON = 'wipe.reason';
/** The labels of wipe.pending to be encrypted: erased, for the next boot to encrypt. */
export const META_WIPE_ENCRYPT = 'wipe.encrypt';

/** The labels in META's wipe.pending. */
function pendingLabels(meta: Record<string, string>, key = META_WIPE_PENDING): VolumeLabel[] {
  return (meta[key] ?? '')
    .split(',')
    .map((l) => l.trim())
    .filter((l): l is VolumeLabel => (WIPEABLE as readonly string[]).includes(l));
}

/**
 * Wipes a volume. One that is encrypted, or is to be encrypted (`encrypt`: its settings ask for
 * it), is erased (eraseVolume: an encrypted one's header and keyslots, the only copies of its
 * key, are zeroed, so nothing on it can be decrypted again), and the next boot formats it as its
 * settings then say. Any other gets a fresh xfs now; if that fails, its ends are zeroed so that
 * nothing of it is read again. Throws only when both fail.
 */
async function wipeVolume(label: VolumeLabel, dev: string, log: Logger, when: string, encrypt: boolean): Promise<void> {
  const luks = DEFAULT_VOLUME_OPS.content(dev) === 'luks';
  if (luks || encrypt) {
    eraseVolume(dev);
    log.info(`wiped ${label} (${dev})${when}: ${luks ? 'its LUKS2 header and keyslots erased (nothing on it can be decrypted again); ' : ''}the next boot formats it${encrypt ? ', encrypted' : ''}`);
    return;
  }
  try {
    await mkfsXfs(dev, label);
    log.info(`wiped ${label} (${dev})${when}: a fresh xfs`);
  } catch (err) {
    // Still make its data unreadable: without a superblock the next boot finds no
    // filesystem (no configuration, nothing in /var).
    log.error(`wiping ${label} (${dev}): ${(err as Error).message}; zeroing its start and end instead`);
    zeroEnds(dev, 64 << 20);
    log.warn(`wiped ${label} (${dev})${when}: first and last 64 MiB zeroed`);
  }
}

/**
 * What META records for a wipe of `labels`, written before the reboot starts, so that the wipe
 * is the same whether the reboot does it or, after a power cut, the next boot: the labels, why,
 * the ones to be encrypted (by the configuration in force; STATE also by META's record), and,
 * when STATE goes, the settings the next boot encrypts it with (its old keys go with it).
 */
export function wipeRecord(ctx: LifecycleContext, disk: NodeDisk, labels: readonly VolumeLabel[], reason: string): { set: Record<string, string>; remove: string[] } {
  const set: Record<string, string> = { [META_WIPE_PENDING]: labels.join(','), [META_WIPE_REASON]: reason };
  const remove: string[] = [];
  let cfg: ReturnType<typeof systemDiskEncryptionOf>;
  try {
    cfg = systemDiskEncryptionOf(ctx.o.configText());
  } catch (err) {
    ctx.o.log.warn(`wipe: reading the encryption settings: ${(err as Error).message}; encrypted volumes are erased and formatted as their settings say at the next boot`);
  }
  let recorded: ReturnType<typeof recordedStateEncryption>;
  try {
    recorded = recordedStateEncryption(disk.partitions.META?.device);
  } catch {
    recorded = undefined;
  }
  const encrypt = labels.filter((l) => (l === 'STATE' ? cfg?.state ?? (ctx.o.configText() === undefined ? recorded : undefined) : cfg?.ephemeral));
  set[META_WIPE_ENCRYPT] = encrypt.join(',');
  if (labels.includes('STATE') && ctx.o.configText() !== undefined) {
    if (cfg?.state) set[META_STATE_ENCRYPTION] = JSON.stringify(cfg.state);
    else remove.push(META_STATE_ENCRYPTION);
  }
  return { set, remove };
}

/**
 * At boot, before the volumes are mounted: carries out a wipe recorded in META that the last
 * reboot did not get to (the power was cut after an upgrade armed GRUB, or during a reset),
 * then clears the record. A wipe that fails leaves the record, and the volume is not mounted
 * half-wiped: it is zeroed instead (see wipeVolume).
 */
export async function wipeRecordedVolumes(disk: NodeDisk, log: Logger): Promise<VolumeLabel[]> {
  const dev = disk.partitions.META?.device;
  if (!dev) return [];
  let store: MetaStore;
  try {
    store = MetaStore.open(dev);
  } catch (err) {
    log.warn(`META on ${dev}: ${(err as Error).message}: no recorded wipes read`);
    return [];
  }
  try {
    const meta = Object.fromEntries(store.all());
    const labels = pendingLabels(meta);
    if (labels.length === 0) return [];
    const why = meta[META_WIPE_REASON] ? ` (${meta[META_WIPE_REASON]})` : '';
    log.warn(`a wipe of ${labels.join(', ')} recorded in META${why} was not done before the last reboot (a power cut?): wiping now`);
    const done: VolumeLabel[] = [];
    for (const label of labels) {
      const part = disk.partitions[label]?.device;
      if (!part) continue;
      try {
        await wipeVolume(label, part, log, ' at boot', pendingLabels(meta, META_WIPE_ENCRYPT).includes(label));
        done.push(label);
      } catch (err) {
        log.error(`zeroing ${label} (${part}): ${(err as Error).message}`);
      }
    }
    const left = labels.filter((l) => !done.includes(l) && disk.partitions[l]?.device);
    if (left.length) store.set({ [META_WIPE_PENDING]: left.join(',') });
    else store.delete([META_WIPE_PENDING, META_WIPE_REASON, META_WIPE_ENCRYPT]);
    return done;
  } finally {
    store.close();
  }
}

/** In the reboot and shutdown sequences, after the volumes are unmounted: the wipes asked for. */
export async function wipePending(ctx: LifecycleContext): Promise<void> {
  const disk = ctx.o.volumes()?.disk;
  if (!disk || ctx.pendingWipe.size === 0) return ctx.pendingWipe.clear();
  let failed = false;
  const encrypt = recordedWipeEncrypt(disk, ctx.o.log);
  for (const label of [...ctx.pendingWipe]) {
    const dev = disk.partitions[label]?.device;
    if (!dev) continue;
    try {
      await wipeVolume(label, dev, ctx.o.log, '', encrypt.includes(label));
    } catch (err) {
      failed = true;
      ctx.o.log.error(`zeroing ${label} (${dev}): ${(err as Error).message}`);
    }
  }
  ctx.pendingWipe.clear();
  // Done: the record goes (one that failed stays, and the next boot tries again).
  if (!failed) {
    try {
      ctx.setMeta(disk, {}, [META_WIPE_PENDING, META_WIPE_REASON, META_WIPE_ENCRYPT]);
    } catch (err) {
      ctx.o.log.warn(`clearing the wipe recorded in META: ${(err as Error).message} (the next boot wipes again)`);
    }
  }
}

/** The labels META's wipe record says are to be encrypted (wipeRecord wrote them). */
function recordedWipeEncrypt(disk: NodeDisk, log: Logger): VolumeLabel[] {
  const dev = disk.partitions.META?.device;
  if (!dev) return [];
  try {
    const store = MetaStore.open(dev);
    try {
      return pendingLabels(Object.fromEntries(store.all()), META_WIPE_ENCRYPT);
    } finally {
      store.close();
    }
  } catch (err) {
    log.warn(`wipe: reading META: ${(err as Error).message}: encrypted volumes are erased, others get a fresh xfs`);
    return [];
  }
}
