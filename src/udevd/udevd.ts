// udevd's core: block devices from kernel uevents and coldplug, probed for partition tables and
// filesystems, given /dev/disk/by-* links, and published as Disks, BlockDevices and
// DiscoveredVolumes and BlockSymlinks resources (src/contract/resources/).
//
// Everything that happens to devices goes through one serial queue (coldplug first, then the
// events in the order the kernel sent them), so a device is never probed twice at once.
// Publishing runs beside it (ResourceMirror) and never holds the queue up.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Publisher } from '../daemon/publisher.ts';
import type { Logger } from '../lib/log.ts';
import { openReader } from '../disk/block-reader.ts';
import { BLOCK_DEVICE_TYPE, type BlockDeviceSpec } from '../contract/resources/block-device.ts';
import { BLOCK_SYMLINK_TYPE } from '../contract/resources/block-symlink.ts';
import { DISCOVERED_VOLUME_TYPE, type DiscoveredVolumeSpec } from '../contract/resources/discovered-volume.ts';
import { BLOCK_NAMESPACE, DISK_TYPE, type DiskSpec, prettySize } from '../contract/resources/disk.ts';
import { type PartitionEntry, type PartitionTable, readPartitionTable } from '../disk/gpt-read.ts';
import { LinkTable, linkNames } from './links.ts';
import { ResourceMirror } from './mirror.ts';
import { NetlinkUeventSource, type UeventSource } from './uevent-socket.ts';
import { type Filesystem, probeFilesystem } from '../disk/superblocks.ts';
import { type SysBlockDevice, blockDevpath, listBlockDevices, readBlockDevice } from '../disk/sysfs.ts';
import { type Uevent, type UeventStats, emptyStats, parseUevent } from './uevent.ts';

export interface DeviceFilterInput {
  name: string;
  devpath: string;
  /** The disk of a partition, '' for a disk. */
  parent: string;
}

export interface UdevdOptions {
  publisher: Publisher;
  log: Logger;
  /** Where the disk/by-* links go. Default '/dev'. */
  devRoot?: string;
  /** Where the device nodes are read (and what devPath names). Default '/dev'. */
  nodeRoot?: string;
  /** Default '/sys'. */
  sysRoot?: string;
  /** Default: the kernel's uevent socket (call initNative() first). */
  source?: UeventSource;
  /** Write 'add' to each device's uevent file at coldplug so every listener sees it. Default true. */
  trigger?: boolean;
  /** Admits new devices; partitions of an admitted disk are always admitted. Default: all. */
  filter?: (dev: DeviceFilterInput) => boolean;
  /** Remove disk/by-* links no device claims after coldplug (left by an earlier run). Default true. */
  pruneLinks?: boolean;
}

export interface Device {
  sys: SysBlockDevice;
  /** A disk's partition table. */
  table?: PartitionTable;
  /** A partition's entry in its disk's table. */
  entry?: PartitionEntry;
  fs?: Filesystem;
  /** Why probing the contents failed, when it did. */
  probeError?: string;
  /** How many times udevd has read the device (1 when first seen); BlockDevices' generation. */
  generation: number;
}

/** ENOMEDIUM: libuv does not know it, so Node says "Unknown system error -123". */
const ENOMEDIUM = 123;

/** Whether opening or reading a device failed because it has no medium (an empty drive). */
export function isNoMedium(err: unknown): boolean {
  const e = err as { errno?: unknown; code?: unknown; message?: unknown } | undefined;
  return e?.errno === -ENOMEDIUM || e?.code === 'ENOMEDIUM' || (typeof e?.message === 'string' && /Unknown system error -123\b/.test(e.message));
}

export class Udevd {
  readonly stats: UeventStats = emptyStats();
  readonly #devices = new Map<string, Device>();
  readonly #links: LinkTable;
  readonly #mirror: ResourceMirror;
  readonly #source: UeventSource;
  readonly #sysRoot: string;
  readonly #nodeRoot: string;
  readonly #log: Logger;
  readonly #opts: UdevdOptions;
  #tail: Promise<void> = Promise.resolve();
  #triggerUuid = '';
  #stopped = false;

  private constructor(opts: UdevdOptions) {
    this.#opts = opts;
    this.#log = opts.log;
    this.#sysRoot = opts.sysRoot ?? '/sys';
    this.#nodeRoot = opts.nodeRoot ?? '/dev';
    this.#links = new LinkTable(opts.devRoot ?? '/dev', opts.log);
    this.#mirror = new ResourceMirror(opts.publisher, BLOCK_NAMESPACE, [DISK_TYPE, BLOCK_DEVICE_TYPE, DISCOVERED_VOLUME_TYPE, BLOCK_SYMLINK_TYPE], opts.log);
    this.#source = opts.source ?? new NetlinkUeventSource();
  }

  /** Listens for uevents, coldplugs the devices present, and resolves when coldplug is done
   *  (publishing may still be under way: see settled()). */
  static async start(opts: UdevdOptions): Promise<Udevd> {
    const d = new Udevd(opts);
    // Listen before looking at /sys, so nothing that changes meanwhile is missed.
    d.#source.start({
      message: (msg) => d.#onMessage(msg),
      overflow: () => {
        d.stats.overflows++;
        d.#log.warn('uevent socket overflowed; rescanning /sys');
        d.#enqueue(() => d.#rescan());
      },
      error: (err) => d.#log.error(`uevent socket: ${err.message}`),
    });
    d.#mirror.start();
    await d.#enqueue(() => d.#coldplug());
    return d;
  }

  device(name: string): Device | undefined {
    return this.#devices.get(name);
  }

  devices(): Device[] {
    return [...this.#devices.values()].sort((a, b) => (a.sys.name < b.sys.name ? -1 : 1));
  }

  linksOf(name: string): string[] {
    return this.#links.linksOf(name);
  }

  /** Resolves when every event received so far is handled and its resources published. */
  async settled(): Promise<void> {
    for (;;) {
      const tail = this.#tail;
      await tail;
      await this.#mirror.idle();
      if (tail === this.#tail) return;
    }
  }

  /** Stops listening; links and published resources stay, as udev leaves /dev on exit. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await this.#source.close();
    await this.#tail;
    this.#mirror.stop();
  }

  // -------------------------------------------------------------------------------------------

  #enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.#tail.then(task).catch((err: unknown) => this.#log.error(`udevd: ${(err as Error).stack ?? err}`));
    this.#tail = run;
    return run;
  }

  #onMessage(msg: Buffer): void {
    this.stats.received++;
    const res = parseUevent(msg);
    if (res.kind === 'libudev') {
      this.stats.libudev++;
      return;
    }
    if (res.kind === 'malformed') {
      this.stats.malformed++;
      return;
    }
    const ev = res.event;
    if (ev.subsystem !== 'block') {
      this.stats.ignored++;
      return;
    }
    this.#enqueue(() => this.#handle(ev));
  }

  async #handle(ev: Uevent): Promise<void> {
    const name = path.basename(ev.devpath);
    switch (ev.action) {
      case 'remove':
        this.#removeAt(ev.devpath);
        return;
      case 'move': {
        const old = ev.env.DEVPATH_OLD;
        if (old) this.#removeAt(old);
        await this.#addOrChange(ev.devpath, ev.env);
        return;
      }
      case 'add':
      case 'change':
      case 'online':
        // The kernel's echo of our own coldplug trigger: the device was just read from /sys.
        if (ev.action === 'add' && this.#triggerUuid && ev.env.SYNTH_UUID === this.#triggerUuid && this.#devices.has(name)) return;
        await this.#addOrChange(ev.devpath, ev.env);
        return;
      default:
        return; // offline, bind, unbind: nothing changes for the block layer
    }
  }

  #admit(name: string, devpath: string): boolean {
    if (this.#devices.has(name)) return true;
    const parent = fs.existsSync(path.join(this.#sysRoot, devpath, 'partition')) ? path.basename(path.dirname(devpath)) : '';
    if (parent && this.#devices.has(parent)) return true;
    return this.#opts.filter ? this.#opts.filter({ name, devpath, parent }) : true;
  }

  async #coldplug(): Promise<void> {
    // Disks come first, so a partition of an admitted disk is admitted with it.
    const present: Array<{ name: string; devpath: string }> = [];
    for (const d of listBlockDevices(this.#sysRoot)) {
      if (!this.#admit(d.name, d.devpath)) continue;
      present.push(d);
      await this.#addOrChange(d.devpath);
    }
    if (this.#opts.trigger ?? true) this.#trigger(present.map((d) => d.devpath));
    if (this.#opts.pruneLinks ?? true) {
      const n = this.#links.prune();
      if (n > 0) this.#log.info(`removed ${n} stale disk links`);
    }
    this.#log.info(`coldplug: ${present.length} block devices`);
  }

  #trigger(devpaths: string[]): void {
    this.#triggerUuid = crypto.randomUUID();
    for (const devpath of devpaths) {
      const file = path.join(this.#sysRoot, devpath, 'uevent');
      try {
        fs.writeFileSync(file, `add ${this.#triggerUuid}`);
      } catch {
        try {
          fs.writeFileSync(file, 'add'); // kernels without synthetic-uevent arguments
        } catch (err) {
          this.#log.warn(`trigger ${devpath}: ${(err as Error).message}`);
        }
      }
    }
  }

  async #rescan(): Promise<void> {
    const present = listBlockDevices(this.#sysRoot);
    const names = new Set(present.map((d) => d.name));
    for (const name of [...this.#devices.keys()]) if (!names.has(name)) this.#remove(name);
    for (const d of present) if (this.#admit(d.name, d.devpath)) await this.#addOrChange(d.devpath);
  }

  /** Removes the device at devpath, if that is where the device of that name is. */
  #removeAt(devpath: string): void {
    const name = path.basename(devpath);
    if (this.#devices.get(name)?.sys.devpath === devpath) this.#remove(name);
  }

  async #addOrChange(eventDevpath: string, eventEnv?: Record<string, string>): Promise<void> {
    const name = path.basename(eventDevpath);
    // /sys/class/block/<name> says where the device really is; an event naming another path
    // does not describe it (and is not trusted to remove it).
    const devpath = blockDevpath(this.#sysRoot, name);
    if (!devpath) {
      this.#removeAt(eventDevpath);
      return;
    }
    const env = devpath === eventDevpath ? eventEnv : undefined;
    if (!this.#admit(name, devpath)) return;
    const sys = readBlockDevice(this.#sysRoot, devpath, env);
    if (!sys || sys.hidden) {
      this.#remove(name);
      return;
    }
    const dev: Device = { sys, generation: (this.#devices.get(name)?.generation ?? 0) + 1 };
    if (sys.size > 0) {
      try {
        const r = await openReader(path.join(this.#nodeRoot, sys.devname), sys.size);
        try {
          if (sys.type === 'disk') dev.table = await readPartitionTable(r, [...new Set([sys.logicalBlockSize, 512, 4096])]);
          dev.fs = await probeFilesystem(r);
        } finally {
          await r.close();
        }
      } catch (err) {
        if (isNoMedium(err)) {
          // An empty drive (a CD-ROM without a disc): nothing to probe, nothing wrong.
          this.#log.info(`${sys.devname}: no medium`);
        } else {
          dev.probeError = (err as Error).message;
          this.#log.warn(`probing ${sys.devname}: ${dev.probeError}`);
        }
      }
    }
    if (sys.type === 'partition') dev.entry = this.#entryFor(sys);
    this.#devices.set(name, dev);
    this.#apply(dev);
    if (sys.type === 'disk') {
      // The table may have changed: its partitions' names and UUIDs follow it.
      for (const child of this.#devices.values()) {
        if (child.sys.parent !== name) continue;
        child.entry = this.#entryFor(child.sys);
        this.#apply(child);
      }
    }
  }

  #entryFor(sys: SysBlockDevice): PartitionEntry | undefined {
    const table = this.#devices.get(sys.parent)?.table;
    return table?.partitions.find((p) => p.number === sys.partitionNumber);
  }

  #remove(name: string): void {
    for (const child of [...this.#devices.values()]) if (child.sys.parent === name) this.#remove(child.sys.name);
    if (!this.#devices.delete(name)) return;
    this.#links.remove(name);
    this.#mirror.delete(DISK_TYPE, name);
    this.#mirror.delete(BLOCK_DEVICE_TYPE, name);
    this.#mirror.delete(DISCOVERED_VOLUME_TYPE, name);
    this.#mirror.delete(BLOCK_SYMLINK_TYPE, name);
    for (const other of this.#links.takeAffected(name)) {
      const o = this.#devices.get(other);
      if (o) this.#publish(o);
    }
  }

  #apply(dev: Device): void {
    const { sys } = dev;
    const links = linkNames({
      devname: sys.devname,
      byId: sys.byId,
      byPath: sys.byPath,
      fsLabel: dev.fs?.label ?? '',
      fsUuid: dev.fs?.uuid ?? '',
      partLabel: dev.entry?.name ?? '',
      partUuid: dev.entry?.uuid ?? '',
    });
    this.#links.set(sys.name, sys.devname, links);
    this.#publish(dev);
    // A device that took over a shared name (a duplicate label) lists it now.
    for (const other of this.#links.takeAffected(sys.name)) {
      const o = this.#devices.get(other);
      if (o) this.#publish(o);
    }
  }

  #publish(dev: Device): void {
    const { sys } = dev;
    const devRoot = this.#opts.devRoot ?? '/dev';
    const symlinks = this.#links.linksOf(sys.name).map((l) => path.join(devRoot, l));
    const devPath = path.join(this.#nodeRoot, sys.devname);
    const devicePath = path.join(this.#sysRoot, sys.devpath);
    const bd: BlockDeviceSpec = { type: sys.type, major: sys.major, minor: sys.minor, devicePath, generation: dev.generation };
    if (sys.partitionName) bd.partitionName = sys.partitionName;
    if (sys.partitionNumber) bd.partitionNumber = sys.partitionNumber;
    if (sys.parent) bd.parent = sys.parent;
    this.#mirror.set(BLOCK_DEVICE_TYPE, sys.name, bd);
    this.#mirror.set(BLOCK_SYMLINK_TYPE, sys.name, { paths: symlinks });

    // What is on the device: a filesystem, else its partition table ('' when neither was found).
    const dv: DiscoveredVolumeSpec = {
      dev_path: devPath,
      type: sys.type,
      device_path: devicePath,
      size: sys.size,
      pretty_size: prettySize(sys.size),
      name: dev.fs?.type ?? dev.table?.type ?? '',
    };
    if (sys.parent) {
      dv.parent = sys.parent;
      const parent = this.#devices.get(sys.parent);
      if (parent) dv.parent_dev_path = path.join(this.#nodeRoot, parent.sys.devname);
    }
    if (sys.logicalBlockSize) dv.sector_size = sys.logicalBlockSize;
    if (sys.ioSize) dv.io_size = sys.ioSize;
    const uuid = dev.fs ? dev.fs.uuid : dev.table?.uuid;
    if (uuid) dv.uuid = uuid;
    if (dev.fs?.label) dv.label = dev.fs.label;
    if (dev.entry) {
      if (dev.entry.uuid) dv.partition_uuid = dev.entry.uuid;
      if (dev.entry.type) dv.partition_type = dev.entry.type;
      if (dev.entry.name) dv.partition_label = dev.entry.name;
      dv.partition_index = dev.entry.number;
    }
    this.#mirror.set(DISCOVERED_VOLUME_TYPE, sys.name, dv);

    if (sys.type === 'disk' && sys.size > 0) {
      const disk: DiskSpec = {
        dev_path: devPath,
        size: sys.size,
        pretty_size: prettySize(sys.size),
        io_size: sys.ioSize,
        sector_size: sys.logicalBlockSize,
        readonly: sys.readOnly,
        cdrom: sys.cdrom,
      };
      if (sys.model) disk.model = sys.model;
      if (sys.serial) disk.serial = sys.serial;
      if (sys.modalias) disk.modalias = sys.modalias;
      if (sys.wwid) disk.wwid = sys.wwid;
      if (sys.busPath) disk.bus_path = sys.busPath;
      disk.sub_system = '/sys/class/block';
      if (sys.transport) disk.transport = sys.transport;
      if (sys.rotational) disk.rotational = true;
      if (symlinks.length > 0) disk.symlinks = symlinks;
      this.#mirror.set(DISK_TYPE, sys.name, disk);
    } else {
      this.#mirror.delete(DISK_TYPE, sys.name);
    }
  }
}
