// machined's lifecycle operations on the node's disk: install (machine.install.disk at boot,
// or the Install RPC), upgrade (a signed image into the inactive slot, booted once), the
// commit of a tried slot once the node is Running, rollback, and reset (wiping STATE and
// EPHEMERAL after services are stopped and the volumes unmounted). One operation at a time.
//
// Where the booted slot's files come from for an install: the boot media (the ISO's
// /boot/{vmlinuz,initramfs.xz}, or the running slot on a disk's BOOT), or a signed image
// from a URL (a PXE-booted node has no media to copy from).
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { installOfText } from '../../config/install.ts';
import { UpgradeImageError, verifyUpgradeImage } from '../../install/image.ts';
import type { Logger } from '../../lib/log.ts';
import { StatePublisher } from '../../daemon/publisher.ts';
import { BOOT_STATUS_ID, bootStatusDefinition } from '../../contract/resources/boot-status.ts';
import type { State } from '../../state/state.ts';
import { VERSION } from '../../version.ts';
import { ApiError } from '../api/common.ts';
import type { InstallOptions, Lifecycle, ProgressEvent, ResetOptions, UpgradeOptions, UpgradeOutcome } from '../api/lifecycle.ts';
import type { Cmdline } from '../cmdline.ts';
import type { MountedVolumes, NodeDisk, VolumeLabel } from '../volumes.ts';
import * as grpc from '@grpc/grpc-js';
import { type BlockDisk, DiskError, listDisks, resolveDisk } from './disks.ts';
import { mkfsXfs, withMount } from './fs-tools.ts';
import { checkInstallDisk, installToDisk, zeroEnds } from './installer.ts';
import { MetaStore, readMeta } from '../../install/meta.ts';
import { type BootSnapshot, type Slot, type SlotFiles, bootSnapshot, isSlot, nextBoot, otherSlot, slotPresent, updateGrubenv, writeSlot } from './slots.ts';
import { MS, mount, umount } from '../../lib/sys.ts';
import { openReader } from '../../udevd/bytes.ts';
import { probeFilesystem } from '../../udevd/superblocks.ts';

export const WIPEABLE: readonly VolumeLabel[] = ['STATE', 'EPHEMERAL'];

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
}

const OWNER = 'machined';
const FETCH_ATTEMPTS = 20;
const FETCH_RETRY_MS = 3000;
const BOOT_MOUNT = 'boot';

/** The install settings of a configuration (v1alpha1 machine.install, or an UnattendedInstallConfig naming a disk). */
export function installSettings(text: string | undefined): InstallOptions | undefined {
  if (!text) return undefined;
  const inst = installOfText(text);
  return inst ? { disk: inst.disk, wipe: inst.wipe, image: inst.image ?? '', extraKernelArgs: inst.extraKernelArgs } : undefined;
}

export class NodeLifecycle implements Lifecycle {
  private busy: string | undefined;
  private readonly pendingWipe = new Set<VolumeLabel>();
  private readonly publisher: StatePublisher;
  private committed = false;
  private trialTimer: NodeJS.Timeout | undefined;
  private installTried = false;
  /** The operation running now, so that a reboot or shutdown can wait for it. */
  private current: Promise<unknown> | undefined;
  /** A reboot or shutdown is under way: no new operation starts. */
  private closing = false;

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

  private setMeta(disk: NodeDisk, entries: Record<string, string>): void {
    const dev = disk.partitions.META?.device;
    if (!dev) return this.o.log.warn(`no META partition on ${disk.device}: not recording ${Object.keys(entries).join(', ')}`);
    const store = MetaStore.open(dev);
    try {
      store.set(entries);
    } finally {
      store.close();
    }
  }

  // ---- boot ----------------------------------------------------------------------------

  /**
   * At boot, before services: publishes the boot status and, on a tried slot, starts the
   * clock after which machined gives up on it (reboots, and GRUB boots the old slot).
   * Also notices an upgrade that GRUB already fell back from.
   */
  async boot(): Promise<void> {
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
      this.o.log.info(`slot ${booted} reached Running: it is now the slot GRUB boots`);
    } catch (err) {
      this.committed = false;
      this.o.log.error(`committing slot ${booted}: ${(err as Error).message}`);
    }
    await this.publishStatus(snap);
  }

  /** The configuration names an install disk and the node is not installed: install, then reboot. */
  async maybeInstall(configText: string | undefined): Promise<void> {
    const inst = installSettings(configText);
    if (!inst || this.installTried) return;
    const disk = this.disk();
    if (disk) {
      this.o.log.info(`machine.install.disk ${inst.disk}: already installed (running from ${disk.device})`);
      return;
    }
    this.installTried = true;
    this.o.log.info(`machine.install.disk ${inst.disk}: installing`);
    let last = '';
    try {
      await this.install(inst, (p) => {
        if (p.stage !== last) this.o.log.info(`install: ${p.stage}: ${p.message}`);
        last = p.stage;
      }, new AbortController().signal);
    } catch (err) {
      this.o.log.error(`install to ${inst.disk} failed: ${(err as Error).message}`);
      return;
    }
    this.o.log.info('install done: rebooting into the installed disk');
    await this.o.requestSequence('reboot', 'install finished', '');
  }

  // ---- the API ---------------------------------------------------------------------------

  install(o: InstallOptions, progress: (p: ProgressEvent) => void, signal: AbortSignal): Promise<void> {
    return this.exclusive('install', async () => {
      let disk: BlockDisk;
      try {
        disk = resolveDisk(o.disk);
      } catch (err) {
        throw new ApiError(grpc.status.INVALID_ARGUMENT, (err as Error).message);
      }
      const own = this.o.volumes()?.disk;
      if (own && own.device === disk.device) {
        throw new ApiError(grpc.status.FAILED_PRECONDITION, `${disk.device} is this node's own disk, which it runs from: use upgrade to change its image`);
      }
      // A second Bronze disk would share BOOT's filesystem UUID, and GRUB and machined could
      // pick different ones.
      if (this.disk()) throw new ApiError(grpc.status.FAILED_PRECONDITION, `this node is already installed (on ${this.disk()!.device}): it installs to one disk only`);
      const report = (stage: string, message: string, done?: number, total?: number) => progress({ stage, message, done, total });
      const stage = path.join(this.o.stageRoot ?? '/var/lib/bronze', 'install');
      try {
        // The disk first: no download for a disk that will be refused.
        await checkInstallDisk(disk, o.wipe);
        const { files, version, cleanup, device } = await this.installSource(o.image, stage, report, signal);
        try {
          if (device === disk.device) throw new DiskError(`${disk.device} is the media the node booted from (the install copies from it)`);
          await installToDisk(
            { disk, wipe: o.wipe, files, version, extraKernelArgs: o.extraKernelArgs, configText: this.o.configText(), bootloaderDir: this.bootloaderDir, signal },
            report,
          );
        } finally {
          await cleanup();
        }
      } catch (err) {
        if (err instanceof ApiError) throw err;
        if (err instanceof DiskError) throw new ApiError(grpc.status.FAILED_PRECONDITION, err.message);
        if (err instanceof UpgradeImageError) throw new ApiError(grpc.status.INVALID_ARGUMENT, `install image refused: ${err.message}`);
        throw err;
      }
      report('reboot', `installed Bronze to ${disk.device}`);
    });
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
    report(what, url || `${size} bytes from the client`, 0, total);
    const verified = await verifyUpgradeImage(source, {
      trustedKeyPem,
      stageDir: stage,
      maxBytes: 1 << 30,
      onProgress: (n) => {
        const pct = total ? Math.floor((n * 10) / total) : -1;
        if (pct !== lastPct) {
          lastPct = pct;
          report(what, url || 'upload', n, total);
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
      const report = (stage: string, message: string, done?: number, total?: number) => progress({ stage, message, done, total });
      // EPHEMERAL (/var) holds the staged image: it is there on every installed node.
      const stage = path.join(this.o.stageRoot ?? '/var/lib/bronze', 'upgrade');
      let snap: BootSnapshot;
      try {
        let verified;
        try {
          verified = await this.fetchVerified(o.image, upload, size, stage, report, signal);
        } catch (err) {
          if (err instanceof UpgradeImageError) throw new ApiError(grpc.status.INVALID_ARGUMENT, `upgrade image refused, nothing was written: ${err.message}`);
          throw err;
        }
        if (signal.aborted) throw new ApiError(grpc.status.CANCELLED, 'upgrade cancelled, nothing was written');
        const version = verified.manifest.version;
        const files = { vmlinuz: verified.files.vmlinuz, initramfs: verified.files['initramfs.xz'], roothash: verified.manifest.roothash };
        const total = fs.statSync(files.vmlinuz).size + fs.statSync(files.initramfs).size;
        report('write', `slot ${target}: Bronze ${version}`, 0, total);
        // The slot, then META (so that a fallback is recognised), then GRUB's boot-once: the
        // last write arms it, and any failure before leaves GRUB as it was.
        snap = await this.withBoot(disk, async (dir) => {
          await writeSlot(dir, target, files);
          this.setMeta(disk, {
            [`slot.${target}.version`]: version,
            'upgrade.from': booted,
            'upgrade.to': target,
            'upgrade.version': version,
            'upgrade.state': 'trying',
            'upgrade.time': new Date().toISOString(),
          });
          updateGrubenv(dir, { next_entry: target, next_tries: '1' });
          return bootSnapshot(dir);
        });
        report('write', `slot ${target}: Bronze ${version} written; GRUB boots it once next`, total, total);
        if (o.stage) report('write', `staged: slot ${target} boots at the next reboot`);
        if (!o.preserve) {
          this.pendingWipe.add('EPHEMERAL');
          report('write', 'EPHEMERAL (/var) will be wiped at the reboot (use --preserve to keep it)');
        }
      } finally {
        fs.rmSync(stage, { recursive: true, force: true });
      }
      await this.publishStatus(snap);
      return { staged: o.stage };
    });
  }

  reboot(reason: string, actorId: string): void | Promise<void> {
    return this.o.requestSequence('reboot', reason, actorId);
  }

  reset(o: ResetOptions, actorId: string): Promise<void> {
    const labels = (o.labels.length ? o.labels : WIPEABLE).map((l) => l.toUpperCase());
    const bad = labels.filter((l) => !(WIPEABLE as readonly string[]).includes(l));
    if (bad.length) return Promise.reject(new ApiError(grpc.status.INVALID_ARGUMENT, `cannot wipe ${bad.join(', ')}: only ${WIPEABLE.join(' and ')} can be wiped`));
    return this.exclusive('reset', async () => {
      const disk = this.o.volumes()?.disk;
      for (const l of labels as VolumeLabel[]) {
        if (disk?.partitions[l]?.device) this.pendingWipe.add(l);
        else this.o.log.warn(`reset: no ${l} partition on a disk: ${l} is memory-backed and goes with the ${o.reboot ? 'reboot' : 'power-off'}`);
      }
      this.o.log.warn(`reset: wiping ${labels.join(', ')}, then ${o.reboot ? 'rebooting into maintenance mode' : 'powering off'}`);
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
      if (!this.committed) {
        // On trial: GRUB's default is still the other slot, a reboot is the rollback.
        this.committed = true; // and this slot must not become the default meanwhile
        clearTimeout(this.trialTimer);
        this.o.log.warn(`rollback: slot ${booted} is on trial; rebooting into the default slot ${target}`);
        void this.o.requestSequence('reboot', `rollback to slot ${target}`, actorId);
        return;
      }
      await this.withBoot(disk, async (dir) => {
        if (!slotPresent(dir, target)) throw new ApiError(grpc.status.FAILED_PRECONDITION, `cannot roll back: slot ${target} holds no image`);
        this.setMeta(disk, { 'rollback.from': booted, 'rollback.to': target, 'rollback.time': new Date().toISOString() });
        // A trial like an upgrade's: the old slot becomes the default once it is Running, and
        // if it no longer boots (a failed upgrade left there), GRUB comes back here.
        updateGrubenv(dir, { next_entry: target, next_tries: '1' });
      });
      this.o.log.warn(`rollback: slot ${target} (${this.meta(disk)[`slot.${target}.version`] ?? 'unknown version'}) boots once next, and becomes the default when Running; rebooting`);
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
    for (const label of [...this.pendingWipe]) {
      const dev = disk?.partitions[label]?.device;
      if (!dev) continue;
      try {
        await mkfsXfs(dev, label);
        this.o.log.info(`wiped ${label} (${dev}): a fresh xfs`);
      } catch (err) {
        // Still make its data unreadable: without a superblock the next boot finds no
        // filesystem (no configuration, nothing in /var).
        this.o.log.error(`wiping ${label} (${dev}): ${(err as Error).message}; zeroing its start and end instead`);
        try {
          zeroEnds(dev, 64 << 20);
          this.o.log.warn(`wiped ${label} (${dev}): first and last 64 MiB zeroed`);
        } catch (err2) {
          this.o.log.error(`zeroing ${label} (${dev}): ${(err2 as Error).message}`);
        }
      }
    }
    this.pendingWipe.clear();
  }

  /** The BootStatus resource, from `snap` when the caller just read BOOT (else BOOT is read). */
  private async publishStatus(snap?: BootSnapshot): Promise<void> {
    const disk = this.disk();
    const booted = this.bootedSlot();
    let spec: Record<string, unknown> = { installed: false, booted: booted ?? '', version: VERSION.tag };
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
          upgrade: meta['upgrade.state'] ? { state: meta['upgrade.state'], from: meta['upgrade.from'], to: meta['upgrade.to'], version: meta['upgrade.version'] } : undefined,
        };
      } catch (err) {
        this.o.log.warn(`boot status: ${(err as Error).message}`);
      }
    }
    await this.publisher.apply(bootStatusDefinition.defaultNamespace, bootStatusDefinition.type, BOOT_STATUS_ID, JSON.parse(JSON.stringify(spec)));
  }
}

