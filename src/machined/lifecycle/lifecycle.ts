// machined's lifecycle operations on the node's disk: install (machine.install.disk at boot,
// or the Install RPC), upgrade (a signed image into the inactive slot, booted once), the
// commit of a tried slot once the node is Running, rollback, reset (wiping STATE and
// EPHEMERAL after services are stopped and the volumes unmounted), and repair (xfs_repair on a
// volume that did not mount). One operation at a time; each step of each is logged to the
// console (and `logs machined`), not only sent to the client.
//
// What must survive a power cut is in META, not in memory: a wipe asked for (an upgrade
// without --preserve, a reset) is recorded before GRUB is armed or the reboot starts, and
// carried out at the next boot if the reboot never got to it (wipeRecordedVolumes). What an
// install that failed after the reply left behind is visible: the MachineStatus condition
// 'install', BootStatus's `install`, and the console.
//
// Where the booted slot's files come from for an install: the boot media (the ISO's
// /boot/{vmlinuz,initramfs.xz}, or the running slot on a disk's BOOT), or a signed image
// from a URL (a PXE-booted node has no media to copy from).
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { installOfText } from '../../config/install.ts';
import { validated } from '../config/parsed.ts';
import { UpgradeImageError, verifyUpgradeImage } from '../../install/image.ts';
import type { Logger } from '../../lib/log.ts';
import { StatePublisher } from '../../daemon/publisher.ts';
import { BOOT_STATUS_ID, bootStatusDefinition } from '../../contract/resources/boot-status.ts';
import type { State } from '../../state/state.ts';
import { VERSION } from '../../version.ts';
import { ApiError } from '../api/common.ts';
import type { InstallOptions, Lifecycle, ProgressEvent, RepairOptions, ResetOptions, UpgradeOptions, UpgradeOutcome } from '../api/lifecycle.ts';
import type { Cmdline } from '../cmdline.ts';
import { type MountedVolumes, type NodeDisk, type VolumeLabel, repairAdvice } from '../volumes.ts';
import type { MachineStage } from '../machine-status.ts';
import { VOLUME_STATUS_NAMESPACE, VOLUME_STATUS_TYPE, type VolumeStatusSpec } from '../volume-status.ts';
import { CONFIG_FILE } from '../config/manager.ts';
import * as grpc from '@grpc/grpc-js';
import { type BlockDisk, DiskError, listDisks, resolveDisk } from './disks.ts';
import { XfsRepairError, mkfsXfs, withMount, xfsRepair } from './fs-tools.ts';
import { checkInstallDisk, installToDisk, zeroEnds } from './installer.ts';
import { MetaStore, readMeta } from '../../install/meta.ts';
import { type BootSnapshot, type Slot, type SlotFiles, bootSnapshot, isSlot, nextBoot, otherSlot, slotPresent, updateGrubenv, writeSlot } from './slots.ts';
import { MS, mount, umount } from '../../lib/sys.ts';
import { openReader } from '../../disk/block-reader.ts';
import { probeFilesystem } from '../../disk/superblocks.ts';

export const WIPEABLE: readonly VolumeLabel[] = ['STATE', 'EPHEMERAL'];

/** META keys: the volumes a reboot must wipe (comma-separated labels), and why. */
export const META_WIPE_PENDING = 'wipe.pending';
export const META_WIPE_REASON = 'wipe.reason';

/** What the lifecycle reports about the machine (MachineStatusReporter). */
export interface StatusSink {
  readonly stage: MachineStage;
  setStage(stage: MachineStage): Promise<void>;
  report(name: string, reasons: readonly string[]): Promise<void>;
}

export interface NodeLifecycleOptions {
  log: Logger;
  state: State;
  cmdline: () => Cmdline;
  /** The node disk mountNodeVolumes found at boot (undefined: none, running from memory). */
  volumes: () => MountedVolumes | undefined;
  /** The machine configuration in force (written to STATE by an install). */
  configText: () => string | undefined;
  requestSequence: (seq: 'reboot' | 'shutdown', reason: string, actorId: string) => void | Promise<void>;
  /** Default /usr/share/bronze/bootloader. */
  bootloaderDir?: string;
  /** The public key upgrades must be signed with; default /usr/share/bronze/signing-key.pub. */
  trustedKeyFile?: string;
  /** How long a tried slot has to reach Running before machined reboots into the old one. Default 10 min. */
  trialTimeoutMs?: number;
  /** Where images are staged (install/, upgrade/ below it); default /var/lib/bronze. */
  stageRoot?: string;
  /** Mounts BOOT for the length of fn; default a scratch xfs mount (tests pass a directory). */
  mountBoot?: <T>(device: string, fn: (dir: string) => Promise<T>) => Promise<T>;
  /** Where conditions that keep the machine from being ready (a failed install, a volume that does not mount) and its stage go. */
  status?: StatusSink;
  /** Repairs the xfs on a device (default xfs_repair from the rootfs); tests pass their own. */
  repairFs?: (device: string, o: { zeroLog: boolean; onLine: (line: string) => void }) => Promise<void>;
  /** Checks a repaired volume by mounting it read-only for fn (default a scratch xfs mount). */
  mountCheck?: <T>(device: string, fn: (dir: string) => Promise<T>) => Promise<T>;
}

/** The install the node last attempted (machine.install or the Install RPC), for BootStatus. */
interface InstallRecord {
  state: 'running' | 'failed' | 'done';
  disk: string;
  error?: string;
  time: string;
}

/** The labels in META's wipe.pending. */
function pendingLabels(meta: Record<string, string>): VolumeLabel[] {
  return (meta[META_WIPE_PENDING] ?? '')
    .split(',')
    .map((l) => l.trim())
    .filter((l): l is VolumeLabel => (WIPEABLE as readonly string[]).includes(l));
}

/** Makes a fresh xfs on a volume; if that fails, zeroes its ends so that nothing of it is read again. Throws only when both fail. */
async function wipeVolume(label: VolumeLabel, dev: string, log: Logger, when: string): Promise<void> {
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
        await wipeVolume(label, part, log, ' at boot');
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

const OWNER = 'machined';
const FETCH_ATTEMPTS = 20;
const FETCH_RETRY_MS = 3000;
const BOOT_MOUNT = 'boot';

/** The install settings of a configuration (v1alpha1 machine.install, or an UnattendedInstallConfig naming a disk). */
export function installSettings(text: string | undefined): InstallOptions | undefined {
  if (!text) return undefined;
  // A valid configuration's install settings, as the validator read them; the raw reading for
  // text that does not validate (an install named there is still refused visibly, not ignored).
  const r = validated(text);
  const inst = r.ok ? r.config.install : installOfText(text);
  return inst ? { disk: inst.disk, wipe: inst.wipe, image: inst.image ?? '', extraKernelArgs: inst.extraKernelArgs } : undefined;
}

/** The latest upgrade or rollback META records, in a few words (BootStatus's `last`, a table column). */
export function lastChange(meta: Record<string, string>): string | undefined {
  const up = meta['upgrade.state'] ? { at: meta['upgrade.time'] ?? '', text: `upgrade ${meta['upgrade.from'] ?? '?'}->${meta['upgrade.to'] ?? '?'} (${meta['upgrade.version'] ?? '?'}) ${meta['upgrade.state']}` } : undefined;
  const back = meta['rollback.to'] ? { at: meta['rollback.time'] ?? '', text: `rollback ${meta['rollback.from'] ?? '?'}->${meta['rollback.to']}${meta['rollback.version'] ? ` (${meta['rollback.version']})` : ''} ${meta['rollback.state'] ?? 'committed'}` } : undefined;
  if (!up || !back) return (up ?? back)?.text;
  return (back.at > up.at ? back : up).text;
}

export class NodeLifecycle implements Lifecycle {
  private busy: string | undefined;
  private readonly pendingWipe = new Set<VolumeLabel>();
  private readonly publisher: StatePublisher;
  private committed = false;
  private trialTimer: NodeJS.Timeout | undefined;
  /** The operation running now, so that a reboot or shutdown can wait for it. */
  private current: Promise<unknown> | undefined;
  /** A reboot or shutdown is under way: no new operation starts. */
  private closing = false;
  /** The last install attempted, and the settings machine.install last asked for. */
  private lastInstall: InstallRecord | undefined;
  private lastInstallKey: string | undefined;

  constructor(private readonly o: NodeLifecycleOptions) {
    this.publisher = new StatePublisher(o.state, OWNER);
  }

  private get bootloaderDir(): string {
    return this.o.bootloaderDir ?? '/usr/share/bronze/bootloader';
  }

  /** The node's installed disk (BOOT on it), if any. */
  private disk(): NodeDisk | undefined {
    const d = this.o.volumes()?.disk;
    return d?.partitions.BOOT?.device ? d : undefined;
  }

  private bootedSlot(): Slot | undefined {
    const s = this.o.cmdline().get('bronze.slot');
    return isSlot(s) ? s : undefined;
  }

  private async exclusive<T>(what: string, fn: () => Promise<T>): Promise<T> {
    this.refuseIfBusy(what);
    this.busy = what;
    const run = fn();
    this.current = run;
    try {
      return await run;
    } finally {
      this.current = undefined;
      if (!this.closing) this.busy = undefined;
    }
  }

  private refuseIfBusy(what: string): void {
    if (this.closing) throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot ${what}: the node is shutting down or rebooting`);
    if (this.busy) throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot ${what}: ${this.busy} is in progress`);
  }

  /**
   * Called as a reboot or shutdown begins, before services stop: no new operation starts, and
   * one under way (an upgrade writing its slot, an install partitioning) is waited for, so
   * that nothing is unmounted under it.
   */
  async quiesce(): Promise<void> {
    this.closing = true;
    this.busy ??= 'a reboot';
    clearTimeout(this.trialTimer);
    if (this.current) {
      this.o.log.info(`waiting for the ${this.busy} in progress before stopping`);
      await this.current.catch(() => {});
    }
  }

  private installedOrThrow(what: string): { disk: NodeDisk; booted: Slot } {
    const disk = this.disk();
    const booted = this.bootedSlot();
    if (disk && !booted) {
      // Installed, but this boot came from other media (the ISO's own entry, PXE, a bare kernel).
      throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot ${what}: Bronze is installed on ${disk.device}, but this boot did not come from it (the ISO's own menu entry, PXE or a bare kernel): boot from the disk (the ISO's default entry does, or remove the media) and ${what} there`);
    }
    if (!disk || !booted) {
      throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot ${what}: this node is not running from an installed disk (booted from ${booted ? 'a disk without BOOT' : 'the ISO, PXE or a bare kernel'}); install it first`);
    }
    return { disk, booted };
  }

  /** BOOT mounted for fn; one user at a time (a status read never stacks a mount on an upgrade's). */
  private withBoot<T>(disk: NodeDisk, fn: (dir: string) => Promise<T>): Promise<T> {
    const mountBoot = this.o.mountBoot ?? (<U>(device: string, f: (dir: string) => Promise<U>) => withMount(device, 'xfs', BOOT_MOUNT, f));
    const run = this.bootLock.then(() => mountBoot(disk.partitions.BOOT!.device!, fn));
    this.bootLock = run.then(
      () => {},
      () => {},
    );
    return run;
  }
  private bootLock: Promise<void> = Promise.resolve();

  private meta(disk: NodeDisk): Record<string, string> {
    const dev = disk.partitions.META?.device;
    if (!dev) return {};
    try {
      const st = readMeta(dev);
      if (st.corrupt) this.o.log.warn(`META on ${dev} is damaged: no valid copy`);
      return Object.fromEntries(st.values);
    } catch (err) {
      this.o.log.warn(`META on ${dev}: ${(err as Error).message}`);
      return {};
    }
  }

  private setMeta(disk: NodeDisk, entries: Record<string, string>, remove: string[] = []): void {
    const dev = disk.partitions.META?.device;
    if (!dev) return this.o.log.warn(`no META partition on ${disk.device}: not recording ${Object.keys(entries).join(', ')}`);
    const store = MetaStore.open(dev);
    try {
      if (Object.keys(entries).length) store.set(entries);
      if (remove.length) store.delete(remove);
    } finally {
      store.close();
    }
  }

  /**
   * A progress report for an operation that also goes to the console: a line when a step
   * starts or its message changes; of a counted step (bytes), its start and its end only.
   */
  private steps(op: string, progress: (p: ProgressEvent) => void): (stage: string, message: string, done?: number, total?: number) => void {
    let last = '';
    return (stage, message, done, total) => {
      progress({ stage, message, done, total });
      if (total !== undefined && total > 0 && done !== undefined && done > 0 && done < total) return;
      const line = `${op}: ${stage}: ${message}`;
      if (line !== last) this.o.log.info(line);
      last = line;
    };
  }

  // ---- boot ----------------------------------------------------------------------------

  /**
   * At boot, before services: publishes the boot status and, on a tried slot, starts the
   * clock after which machined gives up on it (reboots, and GRUB boots the old slot).
   * Also notices an upgrade that GRUB already fell back from.
   */
  async boot(): Promise<void> {
    this.clearStaleStages();
    await this.publishVolumes();
    const disk = this.disk();
    const booted = this.bootedSlot();
    if (!disk || !booted) return this.publishStatus();
    let snap: BootSnapshot | undefined;
    try {
      snap = await this.withBoot(disk, async (dir) => bootSnapshot(dir));
      const meta = this.meta(disk);
      const saved = nextBoot(snap.vars).good;
      if (meta['upgrade.state'] === 'trying' && meta['upgrade.to'] !== booted) {
        this.o.log.error(`upgrade to ${meta['upgrade.version'] ?? '?'} (slot ${meta['upgrade.to']}) failed: GRUB fell back to slot ${booted}`);
        this.setMeta(disk, { 'upgrade.state': 'failed', 'upgrade.failed': new Date().toISOString() });
      }
      if (meta['rollback.state'] === 'trying' && meta['rollback.to'] !== booted) {
        this.o.log.error(`rollback to slot ${meta['rollback.to']} failed: it did not come up, GRUB is back on slot ${booted}`);
        this.setMeta(disk, { 'rollback.state': 'failed', 'rollback.failed': new Date().toISOString() });
      } else if (meta['rollback.state'] === 'trying' && booted === saved) {
        // A rollback from a trial is a plain reboot into the default slot: done once it boots.
        this.setMeta(disk, { 'rollback.state': 'committed', 'rollback.committed': new Date().toISOString() });
      }
      if (booted !== saved) {
        const ms = this.o.trialTimeoutMs ?? 10 * 60_000;
        this.o.log.warn(`booted slot ${booted} on trial (the known-good slot is ${saved}): it becomes permanent once every service is Running, else machined reboots into ${saved} in ${Math.round(ms / 1000)} s`);
        this.trialTimer = setTimeout(() => {
          if (this.committed) return;
          this.o.log.error(`slot ${booted} did not reach Running in ${Math.round(ms / 1000)} s: rebooting into slot ${saved}`);
          void this.o.requestSequence('reboot', `slot ${booted} trial timed out`, '');
        }, ms);
        this.trialTimer.unref?.();
      } else {
        this.committed = true;
      }
    } catch (err) {
      this.o.log.warn(`boot slots: ${(err as Error).message}`);
    }
    await this.publishStatus(snap);
  }

  /**
   * Images staged by an install or upgrade that a power cut (or a crash) interrupted: nothing
   * else will ever remove them (an upgrade image is some 50 MB of /var).
   */
  private clearStaleStages(): void {
    const root = this.o.stageRoot ?? '/var/lib/bronze';
    for (const what of ['upgrade', 'install']) {
      const dir = path.join(root, what);
      try {
        if (!fs.existsSync(dir)) continue;
        const entries = fs.readdirSync(dir);
        fs.rmSync(dir, { recursive: true, force: true });
        this.o.log.info(`removed a stale ${what} stage ${dir} (${entries.length ? entries.join(', ') : 'empty'}), left by an ${what} that did not finish`);
      } catch (err) {
        this.o.log.warn(`removing the stale ${what} stage ${dir}: ${(err as Error).message}`);
      }
    }
  }

  /** The VolumeStatus of STATE and EPHEMERAL, and the machine's 'volumes' condition for those that failed. */
  private async publishVolumes(): Promise<void> {
    const statuses = this.o.volumes()?.statuses ?? {};
    const failed: string[] = [];
    for (const [label, spec] of Object.entries(statuses) as Array<[VolumeLabel, VolumeStatusSpec]>) {
      await this.publisher.apply(VOLUME_STATUS_NAMESPACE, VOLUME_STATUS_TYPE, label, JSON.parse(JSON.stringify(spec)));
      if (spec.phase === 'failed') failed.push(`${label} ${spec.location ? `(${spec.location}) ` : ''}failed: ${spec.errorMessage ?? 'not mounted'}`);
    }
    await this.o.status?.report('volumes', failed);
  }

  /** Every service is Running and healthy: a tried slot becomes the known-good one. */
  async running(): Promise<void> {
    if (this.committed) return;
    const disk = this.disk();
    const booted = this.bootedSlot();
    if (!disk || !booted) return;
    this.committed = true;
    clearTimeout(this.trialTimer);
    let snap: BootSnapshot | undefined;
    try {
      snap = await this.withBoot(disk, async (dir) => {
        updateGrubenv(dir, { saved_entry: booted, next_entry: '', next_tries: '' });
        return bootSnapshot(dir);
      });
      const meta = this.meta(disk);
      if (meta['upgrade.state'] === 'trying') this.setMeta(disk, { 'upgrade.state': 'committed', 'upgrade.committed': new Date().toISOString() });
      if (meta['rollback.state'] === 'trying' && meta['rollback.to'] === booted) this.setMeta(disk, { 'rollback.state': 'committed', 'rollback.committed': new Date().toISOString() });
      this.o.log.info(`commit: slot ${booted} reached Running: it is now the slot GRUB boots`);
    } catch (err) {
      this.committed = false;
      this.o.log.error(`committing slot ${booted}: ${(err as Error).message}`);
    }
    await this.publishStatus(snap);
  }

  /**
   * Whether a configuration's machine.install would start an install now (the node is not
   * installed, and these settings were not tried yet); what ApplyConfiguration's reply says.
   */
  installNotice(configText: string | undefined): string | undefined {
    const inst = installSettings(configText);
    if (!inst || this.disk() || this.busy || JSON.stringify(inst) === this.lastInstallKey) return undefined;
    return `An install to ${inst.disk} starts now; the node reboots into it when it is done. Follow it with \`bronzectl get machinestatus\` or \`bronzectl get bootstatus\` (a failure shows there and on the console).`;
  }

  /**
   * The configuration names an install disk and the node is not installed: install, then
   * reboot. Settings already tried are not tried again by themselves (a live change to another
   * part of the configuration must not start an install again); changed settings, or the
   * Install RPC, try again.
   */
  async maybeInstall(configText: string | undefined): Promise<void> {
    const inst = installSettings(configText);
    if (!inst) return;
    const key = JSON.stringify(inst);
    if (key === this.lastInstallKey) return;
    const disk = this.disk();
    if (disk) {
      this.o.log.info(`machine.install.disk ${inst.disk}: already installed (running from ${disk.device})`);
      return;
    }
    this.lastInstallKey = key;
    this.o.log.info(`machine.install.disk ${inst.disk}: installing`);
    try {
      await this.exclusive('install', () => this.runInstall(inst, () => {}, new AbortController().signal, true));
    } catch {
      return; // install() logged and recorded it
    }
    this.o.log.info('install done: rebooting into the installed disk');
    await this.o.requestSequence('reboot', 'install finished', '');
  }

  /** A failed install stays visible: the console, MachineStatus ('install'), BootStatus. */
  private async installFailed(disk: string, err: unknown): Promise<void> {
    const msg = (err as Error)?.message ?? String(err);
    this.lastInstall = { state: 'failed', disk, error: msg, time: new Date().toISOString() };
    this.o.log.error(`install to ${disk} failed: ${msg}`);
    this.o.log.error(`the node keeps running as it is (not installed): fix machine.install and apply the configuration again, or run \`bronzectl install --disk <disk>\``);
    await this.o.status?.report('install', [`install to ${disk} failed: ${msg}`]);
    await this.publishStatus();
  }

  // ---- the API ---------------------------------------------------------------------------

  install(o: InstallOptions, progress: (p: ProgressEvent) => void, signal: AbortSignal): Promise<void> {
    return this.exclusive('install', () => this.runInstall(o, progress, signal, false));
  }

  /**
   * An install, logged step by step. Its failure is recorded (console, MachineStatus 'install',
   * BootStatus) when nobody else would see it: always for one machine.install started (it runs
   * after ApplyConfiguration's reply), and for an Install call once it has begun (its checks
   * passed); a call refused by its checks (no such disk, one holding data, too small, the node's
   * own) is answered with the refusal, and logged.
   */
  private async runInstall(o: InstallOptions, progress: (p: ProgressEvent) => void, signal: AbortSignal, fromConfig: boolean): Promise<void> {
    const report = this.steps('install', progress);
    const stageBefore = this.o.status?.stage;
    let began = false;
    const begin = async () => {
      began = true;
      this.lastInstall = { state: 'running', disk: o.disk, time: new Date().toISOString() };
      await this.o.status?.report('install', []);
      await this.o.status?.setStage('installing');
      await this.publishStatus();
    };
    this.o.log.info(`install: start: to ${o.disk}${o.wipe ? ' (wipe)' : ''} from ${o.image || 'the boot media'}`);
    try {
      await this.installTo(o, report, signal, begin);
    } catch (err) {
      if (began && stageBefore) await this.o.status?.setStage(stageBefore);
      if (began || fromConfig) await this.installFailed(o.disk, err);
      else this.o.log.warn(`install to ${o.disk} refused: ${(err as Error).message}`);
      throw err;
    }
    this.lastInstall = { state: 'done', disk: o.disk, time: new Date().toISOString() };
    await this.publishStatus();
  }

  private async installTo(o: InstallOptions, report: (stage: string, message: string, done?: number, total?: number) => void, signal: AbortSignal, begin: () => Promise<void>): Promise<void> {
    const disk: BlockDisk = resolveDisk(o.disk);
    const own = this.o.volumes()?.disk;
    if (own && own.device === disk.device) {
      throw new ApiError(grpc.status.FAILED_PRECONDITION, `${disk.device} is this node's own disk, which it runs from: use upgrade to change its image`);
    }
    // A second Bronze disk would share BOOT's filesystem UUID, and GRUB and machined could
    // pick different ones.
    if (this.disk()) throw new ApiError(grpc.status.FAILED_PRECONDITION, `this node is already installed (on ${this.disk()!.device}): it installs to one disk only`);
    const stage = path.join(this.o.stageRoot ?? '/var/lib/bronze', 'install');
    // The disk first: no download for a disk that will be refused.
    await checkInstallDisk(disk, o.wipe);
    await begin();
    let source;
    try {
      source = await this.installSource(o.image, stage, report, signal);
    } catch (err) {
      if (err instanceof UpgradeImageError) throw new Error(`install image refused: ${err.message}`, { cause: err });
      throw err;
    }
    const { files, version, cleanup, device } = source;
    try {
      if (device === disk.device) throw new DiskError(`${disk.device} is the media the node booted from (the install copies from it)`);
      await installToDisk(
        { disk, wipe: o.wipe, files, version, extraKernelArgs: o.extraKernelArgs, configText: this.o.configText(), bootloaderDir: this.bootloaderDir, signal },
        report,
      );
    } finally {
      await cleanup();
    }
    report('reboot', `installed Bronze to ${disk.device}`);
  }

  /** The kernel and initramfs an install writes to slot A. */
  private async installSource(image: string, stage: string, report: (s: string, m: string, d?: number, t?: number) => void, signal: AbortSignal): Promise<{ files: SlotFiles; version: string; cleanup: () => Promise<void>; device?: string }> {
    if (image) {
      const v = await this.fetchVerified(image, undefined, 0, stage, report, signal);
      return { files: { vmlinuz: v.files.vmlinuz, initramfs: v.files['initramfs.xz'], roothash: v.manifest.roothash }, version: v.manifest.version, cleanup: async () => fs.rmSync(stage, { recursive: true, force: true }) };
    }
    // The boot media: the ISO (iso9660 labelled BRONZE), mounted read-only for the copy.
    for (const d of listDisks()) {
      const r = await openReader(d.device, d.bytes).catch(() => undefined);
      if (!r) continue;
      const fsys = await probeFilesystem(r).finally(() => r.close());
      if (fsys?.type !== 'iso9660' || fsys.label !== 'BRONZE') continue;
      report('source', `the boot media ${d.device} (Bronze ${VERSION.tag})`);
      const dir = path.join('/run/bronze/mnt', 'media');
      fs.mkdirSync(dir, { recursive: true });
      mount(d.device, dir, 'iso9660', MS.RDONLY | MS.NOSUID | MS.NODEV | MS.NOEXEC);
      const roothash = fs.readFileSync(path.join(dir, 'boot', 'roothash'), 'utf8').trim();
      return { files: { vmlinuz: path.join(dir, 'boot', 'vmlinuz'), initramfs: path.join(dir, 'boot', 'initramfs.xz'), roothash }, version: VERSION.tag, cleanup: async () => umount(dir), device: d.device };
    }
    throw new ApiError(grpc.status.FAILED_PRECONDITION, 'no install source: the node did not boot from the Bronze ISO; give an image URL (machine.install.image, or bronzectl install --image)');
  }

  /** Streams an image (URL, or the client's upload) through verification into `stage`. */
  private async fetchVerified(url: string, upload: AsyncIterable<Buffer> | undefined, size: number, stage: string, report: (s: string, m: string, d?: number, t?: number) => void, signal: AbortSignal) {
    let source: AsyncIterable<Buffer | Uint8Array>;
    let total = size;
    let what: string;
    if (url) {
      if (!/^https?:\/\//.test(url)) throw new ApiError(grpc.status.INVALID_ARGUMENT, `image ${JSON.stringify(url)}: only http:// and https:// URLs can be fetched by the node (a local file is sent by bronzectl)`);
      // The network may still be coming up (an install at boot starts with the services):
      // a connection that fails is tried again for a while.
      let res: Response | undefined;
      for (let attempt = 1; !res; attempt++) {
        try {
          res = await fetch(url, { signal });
        } catch (err) {
          const why = (err as { cause?: Error }).cause?.message ?? (err as Error).message;
          if (signal.aborted || attempt >= FETCH_ATTEMPTS) throw new ApiError(grpc.status.UNAVAILABLE, `fetching ${url}: ${why}`);
          report('download', `${url}: ${why}; trying again (${attempt}/${FETCH_ATTEMPTS})`);
          await new Promise((r) => setTimeout(r, FETCH_RETRY_MS));
        }
      }
      if (!res.ok || !res.body) throw new ApiError(grpc.status.UNAVAILABLE, `fetching ${url}: HTTP ${res.status} ${res.statusText}`);
      total = Number(res.headers.get('content-length') ?? 0);
      source = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
      what = 'download';
    } else {
      if (!upload) throw new ApiError(grpc.status.INVALID_ARGUMENT, 'no image: give a URL or send the image');
      source = upload;
      what = 'receive';
    }
    const trustedKeyFile = this.o.trustedKeyFile ?? '/usr/share/bronze/signing-key.pub';
    let trustedKeyPem: Buffer;
    try {
      trustedKeyPem = fs.readFileSync(trustedKeyFile);
    } catch {
      throw new ApiError(grpc.status.FAILED_PRECONDITION, `this node has no trusted signing key (${trustedKeyFile}): it cannot verify images`);
    }
    fs.rmSync(stage, { recursive: true, force: true });
    let lastPct = -1;
    const sourceName = url || `${size} bytes from the client`;
    report(what, sourceName, 0, total);
    const verified = await verifyUpgradeImage(source, {
      trustedKeyPem,
      stageDir: stage,
      maxBytes: 1 << 30,
      onProgress: (n) => {
        const pct = total ? Math.floor((n * 10) / total) : -1;
        if (pct !== lastPct) {
          lastPct = pct;
          report(what, sourceName, n, total);
        }
      },
    });
    report('verify', `signature and checksums good: Bronze ${verified.manifest.version} (${verified.manifest.arch})`);
    return verified;
  }

  upgrade(o: UpgradeOptions, upload: AsyncIterable<Buffer> | undefined, size: number, progress: (p: ProgressEvent) => void, signal: AbortSignal): Promise<UpgradeOutcome> {
    return this.exclusive('upgrade', async () => {
      const { disk, booted } = this.installedOrThrow('upgrade');
      // On trial, the other slot is the only known-good one: it must not be overwritten.
      if (!this.committed) {
        throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot upgrade: slot ${booted} is on trial (not yet Running with every service healthy); the other slot is the known-good one and is kept until then`);
      }
      const target = otherSlot(booted);
      const report = this.steps('upgrade', progress);
      this.o.log.info(`upgrade: start: slot ${target} from ${o.image || `an upload of ${size} bytes`}${o.preserve ? '' : ', EPHEMERAL (/var) to be wiped at the reboot'}${o.stage ? ', staged' : ''}`);
      // EPHEMERAL (/var) holds the staged image: it is there on every installed node.
      const stage = path.join(this.o.stageRoot ?? '/var/lib/bronze', 'upgrade');
      let snap: BootSnapshot;
      try {
        let verified;
        try {
          verified = await this.fetchVerified(o.image, upload, size, stage, report, signal);
        } catch (err) {
          if (err instanceof UpgradeImageError) {
            const lead = err.reason === 'stage-failed' ? `cannot stage the upgrade image in ${stage}, nothing was written` : err.reason === 'read-failed' ? 'reading the upgrade image failed, nothing was written' : 'upgrade image refused, nothing was written';
            this.o.log.error(`upgrade: ${lead}: ${err.message}`);
            throw new Error(`${lead}: ${err.message}`, { cause: err });
          }
          throw err;
        }
        if (signal.aborted) throw new ApiError(grpc.status.CANCELLED, 'upgrade cancelled, nothing was written');
        const version = verified.manifest.version;
        const files = { vmlinuz: verified.files.vmlinuz, initramfs: verified.files['initramfs.xz'], roothash: verified.manifest.roothash };
        const total = fs.statSync(files.vmlinuz).size + fs.statSync(files.initramfs).size;
        report('write', `slot ${target}: Bronze ${version}`, 0, total);
        // The slot, then META (so that a fallback is recognised, and a wipe asked for survives
        // a power cut), then GRUB's boot-once: the last write arms it, and any failure before
        // leaves GRUB as it was. BOOT is unmounted between the slot and the arming: GRUB reads
        // xfs without replaying its log, so the slot's new files must be in place on the disk
        // (a clean unmount) before GRUB is told to boot them; grubenv itself is rewritten in
        // place and synced, which GRUB sees at once.
        await this.withBoot(disk, async (dir) => {
          await writeSlot(dir, target, files, (n) => report('write', `slot ${target}: Bronze ${version}`, n, total));
        });
        report('write', `slot ${target}: Bronze ${version} written`, total, total);
        const wipe: Record<string, string> = o.preserve ? {} : { [META_WIPE_PENDING]: 'EPHEMERAL', [META_WIPE_REASON]: `upgrade to Bronze ${version} in slot ${target} without --preserve` };
        this.setMeta(disk, {
          [`slot.${target}.version`]: version,
          'upgrade.from': booted,
          'upgrade.to': target,
          'upgrade.version': version,
          'upgrade.state': 'trying',
          'upgrade.time': new Date().toISOString(),
          ...wipe,
        });
        snap = await this.withBoot(disk, async (dir) => {
          try {
            updateGrubenv(dir, { next_entry: target, next_tries: '1' });
          } catch (err) {
            // Not armed: the wipe must not happen either.
            if (!o.preserve) this.setMeta(disk, {}, [META_WIPE_PENDING, META_WIPE_REASON]);
            throw err;
          }
          report('arm', `GRUB boots slot ${target} (Bronze ${version}) once at the next boot; it becomes the default once Running`);
          return bootSnapshot(dir);
        });
        if (o.stage) report('staged', `slot ${target} boots at the next reboot`);
        if (!o.preserve) {
          this.pendingWipe.add('EPHEMERAL');
          report('arm', 'EPHEMERAL (/var) will be wiped at the reboot (use --preserve to keep it); the wipe is recorded in META');
        }
      } finally {
        fs.rmSync(stage, { recursive: true, force: true });
      }
      await this.publishStatus(snap);
      return { staged: o.stage };
    });
  }

  reboot(reason: string, actorId: string): void | Promise<void> {
    this.o.log.info(`reboot: ${reason}`);
    return this.o.requestSequence('reboot', reason, actorId);
  }

  reset(o: ResetOptions, actorId: string): Promise<void> {
    const labels = (o.labels.length ? o.labels : WIPEABLE).map((l: string) => l.toUpperCase());
    const bad = labels.filter((l) => !(WIPEABLE as readonly string[]).includes(l));
    if (bad.length) return Promise.reject(new ApiError(grpc.status.INVALID_ARGUMENT, `cannot wipe ${bad.join(', ')}: only ${WIPEABLE.join(' and ')} can be wiped`));
    return this.exclusive('reset', async () => {
      const disk = this.o.volumes()?.disk;
      this.o.log.warn(`reset: start: wiping ${labels.join(', ')}, then ${o.reboot ? 'rebooting into maintenance mode' : 'powering off'}`);
      for (const l of labels as VolumeLabel[]) {
        if (disk?.partitions[l]?.device) this.pendingWipe.add(l);
        else this.o.log.warn(`reset: no ${l} partition on a disk: ${l} is memory-backed and goes with the ${o.reboot ? 'reboot' : 'power-off'}`);
      }
      // Recorded before the sequence starts: a power cut before the wipe does not undo the reset.
      if (disk && this.pendingWipe.size) {
        try {
          this.setMeta(disk, { [META_WIPE_PENDING]: [...this.pendingWipe].join(','), [META_WIPE_REASON]: `reset (${labels.join(', ')})` });
        } catch (err) {
          this.o.log.warn(`reset: recording the wipe in META: ${(err as Error).message}`);
        }
      }
      await this.o.status?.setStage('resetting');
      void this.o.requestSequence(o.reboot ? 'reboot' : 'shutdown', `reset (${labels.join(', ')})`, actorId);
    });
  }

  async checkRollback(): Promise<void> {
    this.refuseIfBusy('roll back');
    const { disk, booted } = this.installedOrThrow('roll back');
    const target = otherSlot(booted);
    const present = await this.withBoot(disk, async (dir) => slotPresent(dir, target));
    if (!present) throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot roll back: slot ${target} holds no image (nothing was installed there before slot ${booted})`);
  }

  async checkReset(): Promise<void> {
    this.refuseIfBusy('reset');
  }

  rollback(actorId: string): Promise<void> {
    return this.exclusive('rollback', async () => {
      const { disk, booted } = this.installedOrThrow('roll back');
      const target = otherSlot(booted);
      this.o.log.warn(`rollback: start: from slot ${booted} to slot ${target}`);
      if (!this.committed) {
        // On trial: GRUB's default is still the other slot, a reboot is the rollback.
        this.committed = true; // and this slot must not become the default meanwhile
        clearTimeout(this.trialTimer);
        this.setMeta(disk, { 'rollback.from': booted, 'rollback.to': target, 'rollback.version': this.meta(disk)[`slot.${target}.version`] ?? '', 'rollback.state': 'trying', 'rollback.time': new Date().toISOString() });
        this.o.log.warn(`rollback: slot ${booted} is on trial; rebooting into the default slot ${target}`);
        void this.o.requestSequence('reboot', `rollback to slot ${target}`, actorId);
        return;
      }
      await this.withBoot(disk, async (dir) => {
        if (!slotPresent(dir, target)) throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot roll back: slot ${target} holds no image`);
        this.setMeta(disk, { 'rollback.from': booted, 'rollback.to': target, 'rollback.version': this.meta(disk)[`slot.${target}.version`] ?? '', 'rollback.state': 'trying', 'rollback.time': new Date().toISOString() });
        // A trial like an upgrade's: the old slot becomes the default once it is Running, and
        // if it no longer boots (a failed upgrade left there), GRUB comes back here.
        updateGrubenv(dir, { next_entry: target, next_tries: '1' });
      });
      this.o.log.warn(`rollback: arm: slot ${target} (${this.meta(disk)[`slot.${target}.version`] ?? 'unknown version'}) boots once next, and becomes the default when Running; rebooting`);
      void this.o.requestSequence('reboot', `rollback to slot ${target}`, actorId);
    });
  }

  /** The volumes the next reboot or shutdown wipes. */
  get pendingWipes(): VolumeLabel[] {
    return [...this.pendingWipe];
  }

  /** In the reboot and shutdown sequences, after the volumes are unmounted: the wipes asked for. */
  async wipePending(): Promise<void> {
    const disk = this.o.volumes()?.disk;
    if (!disk || this.pendingWipe.size === 0) return this.pendingWipe.clear();
    let failed = false;
    for (const label of [...this.pendingWipe]) {
      const dev = disk.partitions[label]?.device;
      if (!dev) continue;
      try {
        await wipeVolume(label, dev, this.o.log, '');
      } catch (err) {
        failed = true;
        this.o.log.error(`zeroing ${label} (${dev}): ${(err as Error).message}`);
      }
    }
    this.pendingWipe.clear();
    // Done: the record goes (one that failed stays, and the next boot tries again).
    if (!failed) {
      try {
        this.setMeta(disk, {}, [META_WIPE_PENDING, META_WIPE_REASON]);
      } catch (err) {
        this.o.log.warn(`clearing the wipe recorded in META: ${(err as Error).message} (the next boot wipes again)`);
      }
    }
  }

  // ---- repair --------------------------------------------------------------------------

  /**
   * xfs_repair on system volumes that did not mount at boot (the node left them untouched),
   * each then mounted read-only to check it; resolves when the node is ready to reboot (and
   * mount them). Refused for a volume that is mounted (it works; xfs_repair cannot run on it)
   * or not on a disk.
   */
  repair(o: RepairOptions, progress: (p: ProgressEvent) => void, signal: AbortSignal): Promise<void> {
    const labels = [...new Set(o.labels.map((l) => l.trim().toUpperCase()))];
    const bad = labels.filter((l) => !(WIPEABLE as readonly string[]).includes(l));
    if (labels.length === 0) return Promise.reject(new ApiError(grpc.status.INVALID_ARGUMENT, `name the volumes to repair (${WIPEABLE.join(', ')})`));
    if (bad.length) return Promise.reject(new ApiError(grpc.status.INVALID_ARGUMENT, `cannot repair ${bad.join(', ')}: only ${WIPEABLE.join(' and ')} can be repaired`));
    return this.exclusive('repair', async () => {
      const vols = this.o.volumes();
      const targets: Array<{ label: VolumeLabel; dev: string }> = [];
      for (const label of labels as VolumeLabel[]) {
        const dev = vols?.disk?.partitions[label]?.device;
        if (!dev) throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot repair ${label}: there is no ${label} partition on a disk (it is memory-backed)`);
        const m = vols?.mounted.find((x) => x.label === label);
        if (m) throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot repair ${label}: it is mounted at ${m.target} and works; xfs_repair runs only on a volume that did not mount`);
        targets.push({ label, dev });
      }
      const report = this.steps('repair', progress);
      this.o.log.warn(`repair: start: ${targets.map((t) => `${t.label} (${t.dev})`).join(', ')}${o.zeroLog ? ', zeroing a dirty log (-L)' : ''}`);
      const repairFs = this.o.repairFs ?? ((dev, r) => xfsRepair(dev, r));
      const check = this.o.mountCheck ?? (<T>(dev: string, fn: (dir: string) => Promise<T>) => withMount(dev, 'xfs', 'repair-check', fn, { readOnly: true }));
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
          this.o.log.error(`repair: ${label} (${dev}): ${msg}; ${advice}`);
          await this.volumeFailed(label, `xfs_repair failed: ${msg}; ${advice}`);
          throw new ApiError(err instanceof XfsRepairError && err.dirtyLog ? grpc.status.FAILED_PRECONDITION : grpc.status.DATA_LOSS, `repair of ${label} (${dev}) failed: ${msg}; ${advice}`, { cause: err });
        }
        report('verify', `${label} (${dev}): mounting it read-only`);
        const holds = await check(dev, async (dir) => (label === 'STATE' ? fs.existsSync(path.join(dir, CONFIG_FILE)) : true)).catch(async (err: Error) => {
          this.o.log.error(`repair: ${label} (${dev}) still does not mount: ${err.message}`);
          await this.volumeFailed(label, `repaired by xfs_repair, but it still does not mount: ${err.message}; ${repairAdvice(label).replace(/^repair it with .*?, or /, '')}`);
          throw new ApiError(grpc.status.DATA_LOSS, `${label} (${dev}) still does not mount after xfs_repair: ${err.message}; erase it with \`bronzectl reset --system-labels-to-wipe ${label} --reboot\``, { cause: err });
        });
        report('verify', `${label} (${dev}) mounts again${label === 'STATE' ? (holds ? ' and holds a machine configuration' : ', but holds no machine configuration: the node comes back in maintenance mode') : ''}`);
      }
      report('reboot', `repaired ${targets.map((t) => t.label).join(', ')}: rebooting to mount ${targets.length > 1 ? 'them' : 'it'}`);
    });
  }

  /** Updates a failed volume's VolumeStatus error (and the machine's condition). */
  private async volumeFailed(label: VolumeLabel, error: string): Promise<void> {
    const statuses = this.o.volumes()?.statuses;
    const spec = statuses?.[label];
    if (!spec) return;
    spec.errorMessage = error;
    await this.publishVolumes();
  }

  /** The BootStatus resource, from `snap` when the caller just read BOOT (else BOOT is read). */
  private async publishStatus(snap?: BootSnapshot): Promise<void> {
    const disk = this.disk();
    const booted = this.bootedSlot();
    let spec: Record<string, unknown> = { installed: false, booted: booted ?? '', version: VERSION.tag, ...(this.lastInstall ? { install: { ...this.lastInstall } } : {}) };
    if (disk) {
      try {
        const { vars, present } = snap ?? (await this.withBoot(disk, async (dir) => bootSnapshot(dir)));
        const meta = this.meta(disk);
        spec = {
          installed: true,
          disk: disk.device,
          booted: booted ?? '',
          version: VERSION.tag,
          default: nextBoot(vars).good,
          next: vars.get('next_entry') ?? '',
          slots: Object.fromEntries((['A', 'B'] as const).map((s) => [s, { present: present[s], version: meta[`slot.${s}.version`] ?? '' }])),
          upgrade: meta['upgrade.state'] ? { state: meta['upgrade.state'], from: meta['upgrade.from'], to: meta['upgrade.to'], version: meta['upgrade.version'], time: meta['upgrade.time'] } : undefined,
          rollback: meta['rollback.to'] ? { state: meta['rollback.state'] ?? 'committed', from: meta['rollback.from'], to: meta['rollback.to'], version: meta['rollback.version'], time: meta['rollback.time'] } : undefined,
          last: lastChange(meta),
        };
      } catch (err) {
        this.o.log.warn(`boot status: ${(err as Error).message}`);
      }
    }
    await this.publisher.apply(bootStatusDefinition.defaultNamespace, bootStatusDefinition.type, BOOT_STATUS_ID, JSON.parse(JSON.stringify(spec)));
  }
}

