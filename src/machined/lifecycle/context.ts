// What every lifecycle operation shares (install.ts, upgrade.ts, rollback.ts, reset.ts,
// repair.ts, commit.ts): machined's options, the state of the node's one operation at a time
// (which runs, whether a reboot is closing the door, the tried slot's commit, the wipes a
// reboot must do, the last install), and the helpers on the installed disk: BOOT mounted one
// user at a time, META read and written, a step logged to the console as well as reported.
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../../lib/log.ts';
import { StatePublisher } from '../../daemon/publisher.ts';
import type { State } from '../../state/state.ts';
import { ApiError } from '../api/common.ts';
import type { ProgressEvent } from '../api/lifecycle.ts';
import type { Cmdline } from '../cmdline.ts';
import type { MountedVolumes, NodeDisk, VolumeLabel } from '../volumes.ts';
import type { MachineStage } from '../machine-status.ts';
import { withMount } from './fs-tools.ts';
import { MetaStore, readMeta } from '../../install/meta.ts';
import { type Slot, isSlot, updateGrubenv } from './slots.ts';
import { EFIVARS, entryIdFor, selectedEntry, setOneShot } from './sdboot.ts';
import { MS, mount } from '../../lib/sys.ts';

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
  /** Mounts the EFI system partition for the length of fn; default a scratch vfat mount (tests pass a directory). */
  mountEsp?: <T>(device: string, fn: (dir: string) => Promise<T>) => Promise<T>;
  /** Where the EFI variables are (default /sys/firmware/efi/efivars), and how they are made writable for a write and read-only again. */
  efivars?: string;
  remountEfivars?: (writable: boolean) => void;
  /** Mounts BOOT for the length of fn; default a scratch xfs mount (tests pass a directory). */
  mountBoot?: <T>(device: string, fn: (dir: string) => Promise<T>) => Promise<T>;
  /** Where conditions that keep the machine from being ready (a failed install, a volume that does not mount) and its stage go. */
  status?: StatusSink;
  /** Repairs the xfs on a device (default xfs_repair from the rootfs); tests pass their own. */
  repairFs?: (device: string, o: { zeroLog: boolean; onLine: (line: string) => void }) => Promise<void>;
  /** Checks a repaired volume by mounting it read-only for fn (default a scratch xfs mount). */
  mountCheck?: <T>(device: string, fn: (dir: string) => Promise<T>) => Promise<T>;
  /**
   * Why a tried slot must not be committed although its services run (the node's configuration
   * could not be used at boot: the old slot, which could, stays the one to fall back to).
   */
  holdCommit?: () => string | undefined;
}

/** The install the node last attempted (machine.install or the Install RPC), for BootStatus. */
interface InstallRecord {
  state: 'running' | 'failed' | 'done';
  disk: string;
  error?: string;
  time: string;
}

/** A step of an operation: its stage, a message, and for a counted step (bytes) how far it got. */
export type StepReport = (stage: string, message: string, done?: number, total?: number) => void;

const OWNER = 'machined';
const BOOT_MOUNT = 'boot';
const ESP_MOUNT = 'esp';

/** The state of the node's lifecycle, and what its operations share; NodeLifecycle holds one. */
export class LifecycleContext {
  busy: string | undefined;
  readonly pendingWipe = new Set<VolumeLabel>();
  readonly publisher: StatePublisher;
  committed = false;
  /** A commit was held back (holdCommit), and said so. */
  commitHeld = false;
  trialTimer: NodeJS.Timeout | undefined;
  /** The operation running now, so that a reboot or shutdown can wait for it. */
  current: Promise<unknown> | undefined;
  /** A reboot or shutdown is under way: no new operation starts. */
  closing = false;
  /** The last install attempted, and the settings machine.install last asked for. */
  lastInstall: InstallRecord | undefined;
  lastInstallKey: string | undefined;

  constructor(readonly o: NodeLifecycleOptions) {
    this.publisher = new StatePublisher(o.state, OWNER);
  }

  get bootloaderDir(): string {
    return this.o.bootloaderDir ?? '/usr/share/bronze/bootloader';
  }

  /** The node's installed disk (BOOT on it), if any. */
  disk(): NodeDisk | undefined {
    const d = this.o.volumes()?.disk;
    return d?.partitions.BOOT?.device ? d : undefined;
  }

  /** The slot this boot came from: GRUB names it on the command line, systemd-boot in LoaderEntrySelected. */
  bootedSlot(): Slot | undefined {
    const s = this.o.cmdline().get('bronze.slot');
    return isSlot(s) ? s : this.sdBoot()?.slot;
  }

  /** The slot's systemd-boot entry when this boot came from a slot's UKI (sdboot.ts), else undefined (GRUB, or no slot). */
  sdBoot(): { id: string; slot: Slot } | undefined {
    if (isSlot(this.o.cmdline().get('bronze.slot'))) return undefined;
    return selectedEntry(this.o.efivars ?? EFIVARS);
  }

  /**
   * Boots `target` once at the next boot: GRUB's next_entry on BOOT (mounted at `dir`) and,
   * under systemd-boot, its one-shot entry (LoaderEntryOneShot), which arms it there; when that
   * write fails, grubenv is put back and nothing is armed.
   */
  armBootOnce(dir: string, target: Slot): void {
    updateGrubenv(dir, { next_entry: target, next_tries: '1' });
    const sd = this.sdBoot();
    if (!sd) return;
    const id = entryIdFor(sd.id, target);
    const efivars = this.o.efivars ?? EFIVARS;
    const remount = this.o.remountEfivars ?? ((writable: boolean) => mount(null, efivars, null, MS.REMOUNT | MS.NOSUID | MS.NODEV | MS.NOEXEC | (writable ? 0 : MS.RDONLY)));
    try {
      setOneShot(id, { efivars, remount });
    } catch (err) {
      updateGrubenv(dir, { next_entry: '', next_tries: '' });
      throw new Error(`setting systemd-boot's LoaderEntryOneShot to ${id}: ${(err as Error).message}`, { cause: err });
    }
  }

  async exclusive<T>(what: string, fn: () => Promise<T>): Promise<T> {
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

  refuseIfBusy(what: string): void {
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

  installedOrThrow(what: string): { disk: NodeDisk; booted: Slot } {
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
  withBoot<T>(disk: NodeDisk, fn: (dir: string) => Promise<T>): Promise<T> {
    const mountBoot = this.o.mountBoot ?? (<U>(device: string, f: (dir: string) => Promise<U>) => withMount(device, 'xfs', BOOT_MOUNT, f));
    const run = this.bootLock.then(() => mountBoot(disk.partitions.BOOT!.device!, fn));
    this.bootLock = run.then(
      () => {},
      () => {},
    );
    return run;
  }
  private bootLock: Promise<void> = Promise.resolve();

  /** The EFI system partition mounted for fn, in turn with BOOT's users. */
  withEsp<T>(disk: NodeDisk, fn: (dir: string) => Promise<T>): Promise<T> {
    const device = disk.partitions.EFI?.device;
    if (!device) return Promise.reject(new Error(`no EFI system partition on ${disk.device}`));
    const mountEsp = this.o.mountEsp ?? (<U>(d: string, f: (dir: string) => Promise<U>) => withMount(d, 'vfat', ESP_MOUNT, f));
    const run = this.bootLock.then(() => mountEsp(device, fn));
    this.bootLock = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  meta(disk: NodeDisk): Record<string, string> {
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

  setMeta(disk: NodeDisk, entries: Record<string, string>, remove: string[] = []): void {
    const dev = disk.partitions.META?.device;
    if (!dev) return this.o.log.warn(`no META partition on ${disk.device}: not recording ${Object.keys(entries).join(', ')}`);
    MetaStore.update(dev, entries, remove);
  }

  /**
   * A progress report for an operation that also goes to the console: a line when a step
   * starts or its message changes; of a counted step (bytes), its start and its end only.
   */
  steps(op: string, progress: (p: ProgressEvent) => void): StepReport {
    let last = '';
    return (stage, message, done, total) => {
      progress({ stage, message, done, total });
      if (total !== undefined && total > 0 && done !== undefined && done > 0 && done < total) return;
      const line = `${op}: ${stage}: ${message}`;
      if (line !== last) this.o.log.info(line);
      last = line;
    };
  }
}
