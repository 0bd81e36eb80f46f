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
import { DATA_OFFSET } from '../../disk/luks2.ts';
import { DEFAULT_VOLUME_OPS } from '../volumes.ts';
import { META_STATE_ENCRYPTION, recordStateEncryption, recordedStateEncryption, systemDiskEncryptionOf } from '../encryption.ts';

/** The system volumes a reset may wipe (and a repair may repair). */
export const WIPEABLE: readonly VolumeLabel[] = ['STATE', 'EPHEMERAL'];

/** META keys: the volumes a reboot must wipe (comma-separated labels), and why. */
export const META_WIPE_PENDING = 'wipe.pending';
export const META_WIPE_REASON = 'wipe.reason';

/** The labels in META's wipe.pending. */
function pendingLabels(meta: Record<string, string>): VolumeLabel[] {
  return (meta[META_WIPE_PENDING] ?? '')
    .split(',')
    .map((l) => l.trim())
    .filter((l): l is VolumeLabel => (WIPEABLE as readonly string[]).includes(l));
}

/**
 * Wipes a volume. An encrypted one is erased first: its LUKS2 header and keyslots are zeroed, and
 * with them the only copies of its key, so nothing on it can be decrypted again. A volume to be
 * encrypted (`encrypt`; by default, one that was) is left blank, and the next boot encrypts it
 * anew with the settings then in force; any other gets a fresh xfs. If that fails, its ends are
 * zeroed so that nothing of it is read again. Throws only when both fail.
 */
async function wipeVolume(label: VolumeLabel, dev: string, log: Logger, when: string, encrypt?: boolean): Promise<void> {
  const luks = DEFAULT_VOLUME_OPS.content(dev) === 'luks';
  if (luks || encrypt) {
    zeroEnds(dev, DATA_OFFSET);
    if (encrypt ?? luks) {
      log.info(`wiped ${label} (${dev})${when}: ${luks ? 'its LUKS2 header and keyslots erased, ' : ''}left blank to be encrypted anew at the next boot`);
      return;
    }
    log.info(`wiped ${label} (${dev})${when}: its LUKS2 header and keyslots erased; it is no longer to be encrypted`);
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
        // Before the configuration is read, STATE's settings are META's; EPHEMERAL stays as it was.
        await wipeVolume(label, part, log, ' at boot', label === 'STATE' ? Boolean(meta[META_STATE_ENCRYPTION]) : undefined);
        done.push(label);
      } catch (err) {
        log.error(`zeroing ${label} (${part}): ${(err as Error).message}`);
      }
    }
    const left = labels.filter((l) => !done.includes(l) && disk.partitions[l]?.device);
    if (left.length) store.set({ [META_WIPE_PENDING]: left.join(',') });
    else store.delete([META_WIPE_PENDING, META_WIPE_REASON]);
    return done;
  } finally {
    store.close();
  }
}

/** The volumes the next boot is to encrypt: by the configuration in force, and for STATE also by META's record. */
function encryptionWanted(ctx: LifecycleContext, disk: NodeDisk): Set<VolumeLabel> | undefined {
  const out = new Set<VolumeLabel>();
  try {
    const cfg = systemDiskEncryptionOf(ctx.o.configText());
    if (cfg?.state || recordedStateEncryption(disk.partitions.META?.device)) out.add('STATE');
    if (cfg?.ephemeral) out.add('EPHEMERAL');
  } catch (err) {
    ctx.o.log.warn(`wipe: reading the encryption settings: ${(err as Error).message}; encrypted volumes stay to be encrypted`);
    return undefined;
  }
  return out;
}

/** In the reboot and shutdown sequences, after the volumes are unmounted: the wipes asked for. */
export async function wipePending(ctx: LifecycleContext): Promise<void> {
  const disk = ctx.o.volumes()?.disk;
  if (!disk || ctx.pendingWipe.size === 0) return ctx.pendingWipe.clear();
  let failed = false;
  // STATE's old keys go with it: from now on its record is the configuration's.
  if (ctx.pendingWipe.has('STATE') && disk.partitions.META?.device && ctx.o.configText() !== undefined) {
    try {
      recordStateEncryption(disk.partitions.META.device, systemDiskEncryptionOf(ctx.o.configText())?.state);
    } catch (err) {
      ctx.o.log.warn(`wipe: recording STATE's encryption settings in META: ${(err as Error).message}`);
    }
  }
  const wanted = encryptionWanted(ctx, disk);
  for (const label of [...ctx.pendingWipe]) {
    const dev = disk.partitions[label]?.device;
    if (!dev) continue;
    try {
      await wipeVolume(label, dev, ctx.o.log, '', wanted?.has(label));
    } catch (err) {
      failed = true;
      ctx.o.log.error(`zeroing ${label} (${dev}): ${(err as Error).message}`);
    }
  }
  ctx.pendingWipe.clear();
  // Done: the record goes (one that failed stays, and the next boot tries again).
  if (!failed) {
    try {
      ctx.setMeta(disk, {}, [META_WIPE_PENDING, META_WIPE_REASON]);
    } catch (err) {
      ctx.o.log.warn(`clearing the wipe recorded in META: ${(err as Error).message} (the next boot wipes again)`);
    }
  }
}
