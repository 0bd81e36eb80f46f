// The disks the installer may write to, as the kernel shows them: a path from the
// configuration (/dev/vda, /dev/disk/by-id/...) resolved to one whole disk, its size, and
// whether it holds anything (then it is only written with wipe set). Nothing here writes.
import fs from 'node:fs';
import path from 'node:path';
import { isZero, openReader } from '../../disk/block-reader.ts';
import { readPartitionTable } from '../../disk/gpt-read.ts';
import { attr } from '../../disk/sysfs.ts';
import { probeFilesystem } from '../../disk/superblocks.ts';

export interface BlockDisk {
  /** The kernel's name ('vda'). */
  name: string;
  /** Its device node ('/dev/vda'). */
  device: string;
  /** Size in bytes, and the logical sector size. */
  bytes: number;
  sectorSize: number;
  readOnly: boolean;
}

export interface DiskRoots {
  sysRoot?: string;
  devRoot?: string;
}

/**
 * A disk that cannot be used as asked. kind 'argument': what was named is not a usable disk at
 * all (no such device, a partition); 'state': the disk cannot take it (too small, holds data, in
 * use, read-only). api/status.ts maps them to INVALID_ARGUMENT and FAILED_PRECONDITION.
 */
export class DiskError extends Error {
  override name = 'DiskError';
  constructor(
    message: string,
    readonly kind: 'argument' | 'state' = 'state',
  ) {
    super(message);
  }
}


/**
 * Resolves `given` (a device node or a link to one, e.g. /dev/disk/by-id/...) to a whole disk.
 * Throws a DiskError naming what is wrong: no such device, a partition, an empty drive.
 */
export function resolveDisk(given: string, o: DiskRoots = {}): BlockDisk {
  const sysRoot = o.sysRoot ?? '/sys';
  const devRoot = o.devRoot ?? '/dev';
  if (!given.startsWith('/')) throw new DiskError(`${given}: not an absolute device path (e.g. /dev/vda)`, 'argument');
  let real: string;
  try {
    real = fs.realpathSync(given);
  } catch {
    const known = listDisks(o).map((d) => d.device);
    throw new DiskError(`${given}: no such device${known.length ? ` (disks: ${known.join(', ')})` : ' (the node sees no disks)'}`, 'argument');
  }
  const name = path.basename(real);
  const dir = path.join(sysRoot, 'class', 'block', name);
  if (!fs.existsSync(dir)) throw new DiskError(`${given}: not a block device`, 'argument');
  if (fs.existsSync(path.join(dir, 'partition'))) throw new DiskError(`${given} is a partition (${name}): give the whole disk`, 'argument');
  const sectors = Number(attr(dir, 'size'));
  if (!(sectors > 0)) throw new DiskError(`${given}: no medium (size 0)`);
  return {
    name,
    device: path.join(devRoot, name),
    bytes: sectors * 512,
    sectorSize: Number(attr(path.join(dir, 'queue'), 'logical_block_size')) || 512,
    readOnly: attr(dir, 'ro') === '1',
  };
}

/** Every whole disk with a medium (loop and ram devices left out). */
export function listDisks(o: DiskRoots = {}): BlockDisk[] {
  const sysRoot = o.sysRoot ?? '/sys';
  let names: string[];
  try {
    names = fs.readdirSync(path.join(sysRoot, 'class', 'block')).sort();
  } catch {
    return [];
  }
  const out: BlockDisk[] = [];
  for (const n of names) {
    if (/^(loop|ram|zram)\d/.test(n)) continue;
    try {
      out.push(resolveDisk(path.join(o.devRoot ?? '/dev', n), o));
    } catch {
      // partitions, empty drives
    }
  }
  return out;
}

/**
 * What a disk holds, in words, or undefined when it looks blank: a partition table, a
 * filesystem, or any non-zero byte in its first or last MiB (where tables and most
 * superblocks live).
 */
export async function describeContents(disk: BlockDisk): Promise<string | undefined> {
  const r = await openReader(disk.device, disk.bytes);
  try {
    const table = await readPartitionTable(r, [disk.sectorSize, disk.sectorSize === 512 ? 4096 : 512]);
    if (table) {
      const names = table.partitions.map((p) => p.name).filter(Boolean);
      return `a ${table.type === 'gpt' ? 'GPT' : 'DOS'} partition table with ${table.partitions.length} partition(s)${names.length ? ` (${names.join(', ')})` : ''}`;
    }
    const fsys = await probeFilesystem(r);
    if (fsys) return `a ${fsys.type} filesystem${fsys.label ? ` labelled ${fsys.label}` : ''}`;
    const MiB = 1 << 20;
    for (const [where, off] of [
      ['first', 0],
      ['last', Math.max(0, disk.bytes - MiB)],
    ] as const) {
      if (!isZero(await r.read(off, Math.min(MiB, disk.bytes)))) return `data (non-zero bytes in its ${where} MiB)`;
    }
    return undefined;
  } finally {
    await r.close();
  }
}
