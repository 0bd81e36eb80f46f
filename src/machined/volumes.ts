// The node's own disk: its partitions found by GPT partition name (EFI, BIOS, BOOT, META,
// STATE, EPHEMERAL, as image-builder/disk.sh and the installer lay them out), and STATE and
// EPHEMERAL mounted where Bronze keeps its state (/system/state) and its writable data
// (/var). Booted from the initramfs alone (QEMU -kernel, the ISO, PXE) there are no such
// partitions, nothing is mounted, and /system/state and /var stay memory-backed.
//
// Every disk under /sys/class/block is read for its partition table here, with udevd's GPT
// parser, rather than trusting names from elsewhere: machined runs before udevd, and the
// table is the authority. The kernel's partition devices (vda5, nvme0n1p5, ...) are matched by
// partition number.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../lib/log.ts';
import { MS, mount as sysMount, umount as sysUmount } from '../lib/sys.ts';
import { openReader } from '../disk/block-reader.ts';
import { readPartitionTable } from '../disk/gpt-read.ts';
import { attr } from '../disk/sysfs.ts';
import { prettySize } from '../contract/resources/disk.ts';
import type { EncryptionConfig } from '../config/schema.ts';
import { currentMounts } from './mounts.ts';
import type { VolumeStatusSpec } from './volume-status.ts';
import { closeEncrypted, formatEncrypted, openEncrypted, volumeContent, type OpenedVolume } from './encryption.ts';
import { mkfsXfs } from './lifecycle/fs-tools.ts';

export const VOLUME_LABELS = ['EFI', 'BIOS', 'BOOT', 'META', 'STATE', 'EPHEMERAL'] as const;
export type VolumeLabel = (typeof VOLUME_LABELS)[number];

export interface NodePartition {
  label: VolumeLabel;
  /** The GPT entry's number (1-based), as the kernel numbers the partition. */
  number: number;
  /** The kernel's name for the partition ('vda5'); undefined when the kernel shows none. */
  name?: string;
  /** Its device node (`<devRoot>/vda5`); undefined with `name`. */
  device?: string;
  /** Bytes from the start of the disk, and length in bytes. */
  start: number;
  size: number;
  /** GPT unique partition GUID and type GUID (lowercase). */
  uuid: string;
  type: string;
}

export interface NodeDisk {
  /** The kernel's name for the disk ('vda'). */
  disk: string;
  device: string;
  /** The GPT disk GUID. */
  uuid: string;
  /** The Bronze partitions on it by name (the first entry of each name). */
  partitions: Partial<Record<VolumeLabel, NodePartition>>;
}

const LABELS = new Set<string>(VOLUME_LABELS);


/**
 * Every disk under `<sysRoot>/class/block` whose GPT names at least one Bronze partition, in
 * the order of the disks' names. Disks that cannot be read (no medium, gone) or carry no GPT
 * are skipped. Pure over the two roots: a test passes a fake /sys and image files as /dev.
 */
export async function findPartitions(sysRoot = '/sys', devRoot = '/dev'): Promise<NodeDisk[]> {
  const classDir = path.join(sysRoot, 'class', 'block');
  let names: string[];
  try {
    names = fs.readdirSync(classDir).sort();
  } catch {
    return [];
  }
  const out: NodeDisk[] = [];
  for (const disk of names) {
    const dir = path.join(classDir, disk);
    if (fs.existsSync(path.join(dir, 'partition'))) continue; // partitions are found through their disk
    const sectors = Number(attr(dir, 'size'));
    if (!(sectors > 0)) continue; // empty loop devices, drives without a medium
    const device = path.join(devRoot, disk);
    const table = await readTable(device, sectors * 512, Number(attr(path.join(dir, 'queue'), 'logical_block_size')));
    if (table?.type !== 'gpt') continue;
    const kernelParts = partitionsOf(dir);
    const partitions: NodeDisk['partitions'] = {};
    for (const p of table.partitions) {
      if (!LABELS.has(p.name) || partitions[p.name as VolumeLabel]) continue;
      const name = kernelParts.get(p.number);
      partitions[p.name as VolumeLabel] = {
        label: p.name as VolumeLabel,
        number: p.number,
        ...(name ? { name, device: path.join(devRoot, name) } : {}),
        start: p.start * table.sectorSize,
        size: p.size * table.sectorSize,
        uuid: p.uuid,
        type: p.type,
      };
    }
    if (Object.keys(partitions).length > 0) out.push({ disk, device, uuid: table.uuid, partitions });
  }
  return out;
}

async function readTable(device: string, size: number, logicalBlockSize: number) {
  let reader: Awaited<ReturnType<typeof openReader>> | undefined;
  try {
    reader = await openReader(device, size);
    const sizes = logicalBlockSize === 4096 ? [4096, 512] : [512, 4096];
    return await readPartitionTable(reader, sizes);
  } catch {
    return undefined; // no medium, no device node, unreadable: not our disk
  } finally {
    await reader?.close().catch(() => {});
  }
}

/** The kernel's partitions of a disk: number → name, from the `partition` files under its /sys directory. */
function partitionsOf(diskDir: string): Map<number, string> {
  const out = new Map<number, string>();
  let entries: string[];
  try {
    entries = fs.readdirSync(diskDir);
  } catch {
    return out;
  }
  for (const e of entries.sort()) {
    const n = Number(attr(path.join(diskDir, e), 'partition'));
    if (n > 0 && !out.has(n)) out.set(n, e);
  }
  return out;
}

/** Where the node's volumes are mounted, and how. */
export const VOLUME_MOUNTS: ReadonlyArray<{ label: VolumeLabel; target: string; fstype: string; flags: number; mode?: number }> = [
  // The machine configuration and the node's secrets: root only.
  { label: 'STATE', target: '/system/state', fstype: 'xfs', flags: MS.NOSUID | MS.NODEV, mode: 0o700 },
  { label: 'EPHEMERAL', target: '/var', fstype: 'xfs', flags: MS.NOSUID | MS.NODEV },
];

/** What mountNodeVolumes does to encrypted and blank volumes; tests pass their own. */
export interface VolumeOps {
  /** What the volume starts with: LUKS, a wipe's erase mark, zeroes, or anything else (a filesystem). */
  content(device: string): 'luks' | 'erased' | 'blank' | 'other';
  open(device: string, size: number, label: VolumeLabel, cfg: EncryptionConfig): OpenedVolume;
  format(device: string, size: number, label: VolumeLabel, cfg: EncryptionConfig): OpenedVolume;
  close(label: VolumeLabel): void;
  mkfs(device: string, label: VolumeLabel): Promise<void>;
}

export const DEFAULT_VOLUME_OPS: VolumeOps = {
  content: (device) => {
    try {
      return volumeContent(device);
    } catch {
      return 'other'; // unreadable: the mount says why
    }
  },
  open: (device, size, label, cfg) => openEncrypted(device, size, label, cfg),
  format: (device, size, label, cfg) => formatEncrypted(device, size, label, cfg),
  close: (label) => void closeEncrypted(label),
  mkfs: (device, label) => mkfsXfs(device, label),
};

export interface MountVolumesOptions {
  /** After the disk is chosen and before anything is mounted (wipes recorded in META are carried out here). */
  beforeMount?: (disk: NodeDisk) => Promise<void>;
  sysRoot?: string;
  devRoot?: string;
  /** Where each label goes instead of VOLUME_MOUNTS' targets (tests). */
  targets?: Partial<Record<VolumeLabel, string>>;
  mount?: (src: string, target: string, fstype: string, flags: number) => void;
  /** Unmounts the memory-backed filesystem a volume replaces; default: umount(2) when it is an empty tmpfs. */
  replace?: (target: string) => void;
  /**
   * How a volume is encrypted (undefined: it is not), asked for each volume in VOLUME_MOUNTS'
   * order once the ones before it are mounted (EPHEMERAL's settings are in the configuration on
   * STATE). A throw fails that volume with its message.
   */
  encryption?: (label: VolumeLabel, disk: NodeDisk) => EncryptionConfig | undefined;
  ops?: VolumeOps;
}

export interface MountedVolumes {
  /** The node's disk (see chooseDisk), if there is one. */
  disk?: NodeDisk;
  mounted: Array<{ label: VolumeLabel; device: string; target: string }>;
  /** What became of each volume of VOLUME_MOUNTS (the VolumeStatus resources' specs). */
  statuses: Partial<Record<VolumeLabel, VolumeStatusSpec>>;
}

/** What an operator can do about a volume that does not mount: one sentence for the console and the API. */
export function repairAdvice(label: VolumeLabel): string {
  return `repair it with \`bronzectl repair ${label}\` (xfs_repair), or erase it with \`bronzectl reset --system-labels-to-wipe ${label} --reboot\``;
}

/** What is lost while a volume is memory-backed. */
const WHILE_IN_MEMORY: Partial<Record<VolumeLabel, string>> = {
  STATE: 'the machine configuration on it is not read, and a configuration applied now is kept in memory only',
  EPHEMERAL: 'what is written to /var now is lost at the next reboot',
};

/** The VolumeStatus of a partition: where it is, and how big. */
function partitionStatus(disk: NodeDisk, part: NodePartition, target: string): VolumeStatusSpec {
  return {
    phase: 'located',
    type: 'partition',
    ...(part.device ? { location: part.device, mountLocation: part.device } : {}),
    partitionIndex: part.number,
    parentLocation: disk.device,
    partitionUUID: part.uuid,
    size: part.size,
    prettySize: prettySize(part.size),
    filesystem: 'xfs',
    mountSpec: { targetPath: target },
  };
}

/**
 * Finds the node's disk and mounts its STATE at /system/state and EPHEMERAL at /var (xfs,
 * nosuid, nodev), logging `mounted STATE (/dev/vda5) at /system/state`. A missing or
 * unmountable volume is logged and left out: the node carries on with memory-backed
 * directories rather than failing to boot. Call it after the early mounts (/sys, /dev, /var's
 * tmpfs, /system) and before the configuration is loaded, which reads STATE.
 */
export async function mountNodeVolumes(log: Logger, o: MountVolumesOptions = {}): Promise<MountedVolumes> {
  const disks = await findPartitions(o.sysRoot, o.devRoot);
  const disk = chooseDisk(disks);
  const statuses: MountedVolumes['statuses'] = {};
  if (!disk) {
    log.info('volumes: no disk with Bronze partitions (STATE, EPHEMERAL): /system/state and /var stay in memory');
    for (const m of VOLUME_MOUNTS) statuses[m.label] = { phase: 'missing', type: 'partition', mountSpec: { targetPath: m.target }, errorMessage: `no ${m.label} partition: ${m.target} is memory-backed` };
    return { mounted: [], statuses };
  }
  const found = VOLUME_LABELS.filter((l) => disk.partitions[l]).map((l) => `${l}=${disk.partitions[l]!.number}`);
  log.info(`volumes: node disk ${disk.device} (GPT ${disk.uuid}): ${found.join(' ')}`);
  for (const other of disks) if (other !== disk) log.warn(`volumes: ignoring ${other.device}, which also has Bronze partitions`);

  if (o.beforeMount) {
    try {
      await o.beforeMount(disk);
    } catch (err) {
      log.error(`volumes: before mounting: ${(err as Error).message}`);
    }
  }

  const doMount = o.mount ?? ((src, target, fstype, flags) => sysMount(src, target, fstype, flags, null));
  const replace = o.replace ?? replaceEmptyTmpfs;
  const mounted: MountedVolumes['mounted'] = [];
  for (const m of VOLUME_MOUNTS) {
    const part = disk.partitions[m.label];
    if (!part) {
      log.warn(`volumes: no ${m.label} partition on ${disk.device}: ${m.target} stays in memory`);
      statuses[m.label] = { phase: 'missing', type: 'partition', parentLocation: disk.device, mountSpec: { targetPath: m.target }, errorMessage: `no ${m.label} partition on ${disk.device}: ${m.target} is memory-backed` };
      continue;
    }
    const target = o.targets?.[m.label] ?? m.target;
    const status = partitionStatus(disk, part, target);
    statuses[m.label] = status;
    if (!part.device) {
      const why = `the kernel shows no device for ${m.label} (partition ${part.number} of ${disk.device})`;
      log.warn(`volumes: ${why}: ${m.target} stays in memory`);
      Object.assign(status, { phase: 'failed', preFailPhase: 'located', errorMessage: why });
      continue;
    }
    let source: string;
    try {
      source = await prepareVolume(log, disk, { ...part, device: part.device }, m.label, o, status);
    } catch (err) {
      const error = (err as Error).message;
      Object.assign(status, { phase: 'failed', preFailPhase: 'located', errorMessage: error });
      log.error(`volumes: ${error}; ${m.target} stays in memory: ${WHILE_IN_MEMORY[m.label] ?? 'it is memory-backed'}`);
      continue;
    }
    try {
      fs.mkdirSync(target, { recursive: true });
      replace(target);
      doMount(source, target, m.fstype, m.flags);
      if (m.mode !== undefined) fs.chmodSync(target, m.mode);
      mounted.push({ label: m.label, device: source, target });
      status.phase = 'ready';
      log.info(`mounted ${m.label} (${source === part.device ? source : `${source}, encrypted on ${part.device}`}) at ${target}`);
    } catch (err) {
      // The volume is left as it is (nothing is written to it) until the operator decides.
      const error = `mount ${m.label} (${part.device}) at ${target} (${m.fstype}): ${(err as Error).message}`;
      Object.assign(status, { phase: 'failed', preFailPhase: 'located', errorMessage: `${error}; ${repairAdvice(m.label)}` });
      log.error(`${error}; ${target} stays in memory: ${WHILE_IN_MEMORY[m.label] ?? 'it is memory-backed'}`);
      log.error(`${m.label} is left untouched: ${repairAdvice(m.label)}`);
    }
  }
  return { disk, mounted, statuses };
}

/**
 * Gets a volume ready to mount and returns the device to mount: an encrypted volume is opened
 * (dm-crypt) and its keyslots synced with its settings; one a wipe erased is formatted,
 * encrypted first when its settings say so. Throws, leaving the volume as it was, when it cannot
 * be: a LUKS volume without settings or keys that open it, or a filesystem where encryption is
 * asked for (Bronze, like Talos, does not encrypt in place).
 */
async function prepareVolume(log: Logger, disk: NodeDisk, part: NodePartition & { device: string }, label: VolumeLabel, o: MountVolumesOptions, status: VolumeStatusSpec): Promise<string> {
  const ops = o.ops ?? DEFAULT_VOLUME_OPS;
  let cfg: EncryptionConfig | undefined;
  try {
    cfg = o.encryption?.(label, disk);
  } catch (err) {
    throw new Error(`${label}'s encryption settings: ${(err as Error).message}`);
  }
  const where = `machine.systemDiskEncryption.${label.toLowerCase()} or a VolumeConfig for ${label}`;
  const content = ops.content(part.device);
  if (content === 'other' || content === 'blank') {
    // Zeroes where a filesystem should start may be a damaged xfs that xfs_repair can still
    // recover from its other superblocks: only a volume a wipe erased is formatted.
    if (cfg) {
      const what = content === 'other' ? 'holds a filesystem (or a format that was cut off)' : 'holds neither LUKS2 nor a filesystem';
      throw new Error(
        `${label} (${part.device}) ${what}, but its settings (${label === 'STATE' ? 'recorded in META' : where}) ask for it encrypted: Bronze does not encrypt in place; ` +
          `to encrypt it, erasing what is on it: \`bronzectl reset --system-labels-to-wipe ${label} --reboot\``,
      );
    }
    return part.device;
  }
  if (content === 'erased' && !cfg) {
    log.warn(`volumes: ${label} (${part.device}) was erased by a wipe: making a fresh xfs`);
    await ops.mkfs(part.device, label);
    return part.device;
  }
  if (!cfg) {
    const from = label === 'STATE' ? 'META records no settings for it' : `no encryption settings were found for it (${where}, in the configuration on STATE)`;
    throw new Error(`${label} (${part.device}) is encrypted (LUKS2), but ${from}: it is left closed; \`bronzectl reset --system-labels-to-wipe ${label} --reboot\` erases it`);
  }
  status.encryptionProvider = 'luks2';
  if (content === 'luks') {
    const opened = ops.open(part.device, part.size, label, cfg);
    log.info(`volumes: opened encrypted ${label} (${part.device}) with key slot ${opened.slot}: ${opened.device} (/dev/mapper/luks2-${label})`);
    if (opened.synced?.length) log.info(`volumes: ${label}'s keyslots synced with its settings: ${opened.synced.join(', ')}`);
    if (opened.failedSyncs?.length) {
      log.warn(`volumes: ${label}: keys not synced: ${opened.failedSyncs.join('; ')}`);
      status.encryptionFailedSyncs = opened.failedSyncs;
    }
    status.mountLocation = opened.device;
    return opened.device;
  }
  log.warn(`volumes: ${label} (${part.device}) was erased by a wipe: encrypting it (LUKS2) and making a fresh xfs`);
  const opened = ops.format(part.device, part.size, label, cfg);
  try {
    await ops.mkfs(opened.device, label);
  } catch (err) {
    ops.close(label);
    throw err;
  }
  status.mountLocation = opened.device;
  return opened.device;
}

/**
 * The node's disk among those with Bronze partitions: one with BOOT (installed), then one
 * whose STATE the kernel shows as a device (a whole-disk mapping such as multipath has no
 * partition devices of its own), then the first by name.
 */
export function chooseDisk(disks: NodeDisk[]): NodeDisk | undefined {
  const score = (d: NodeDisk) => (d.partitions.BOOT ? 2 : 0) + (d.partitions.STATE?.device ? 1 : 0);
  let best: NodeDisk | undefined;
  for (const d of disks) if (!best || score(d) > score(best)) best = d;
  return best;
}

/** machined's early tmpfs on /var is unmounted when nothing was written to it yet, so the volume is not stacked on it. */
function replaceEmptyTmpfs(target: string): void {
  const top = currentMounts().filter((m) => m.target === target).at(-1);
  if (top?.fstype !== 'tmpfs') return;
  if (fs.readdirSync(target).length > 0) return; // keep it underneath rather than lose what is there
  sysUmount(target);
}
