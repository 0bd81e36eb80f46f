// RootfsStatuses.runtime.bronze.dev, id 'rootfs': what the kernel says the root filesystem is.
// Read, not assumed: the device "/" is mounted from (mountinfo), whether that is a device-mapper
// device (sysfs dm/name), its live table (a dm-verity target: root hash, algorithm, blocks) and
// the target's status ('V': no corrupted block seen, 'C': one was), through DM_TABLE_STATUS. The
// root counts as verified only when all of that holds, the device is read-only and its root hash
// is the one on the kernel command line (bronze.roothash=, which preinit set up the target with).
import fs from 'node:fs';
import type { RootfsStatusSpec } from '../contract/resources/rootfs-status.ts';
import { type DmDevice, dmTableStatus, parseVerityTable } from '../lib/devmapper.ts';
import type { Cmdline } from './cmdline.ts';

/** Where the facts come from: the running system, or a test's. */
export interface RootfsProbe {
  mountinfo(): string;
  /** A file under /sys, undefined when it does not exist. */
  sysfs(rel: string): string | undefined;
  /** DM_TABLE_STATUS of a mapped device: its table (`table`) or its targets' status. */
  dm(name: string, table: boolean): DmDevice;
  cmdline(): Cmdline;
}

export function systemProbe(cmdline: () => Cmdline): RootfsProbe {
  return {
    mountinfo: () => fs.readFileSync('/proc/self/mountinfo', 'utf8'),
    sysfs: (rel) => {
      try {
        return fs.readFileSync(`/sys/${rel}`, 'utf8');
      } catch {
        return undefined;
      }
    },
    dm: (name, table) => dmTableStatus(name, table),
    cmdline,
  };
}

/** The mount of "/" that is visible (the last one mounted there): its device number, type and source. */
function rootMount(mountinfo: string): { dev: string; fstype: string; source: string } | undefined {
  let found: { dev: string; fstype: string; source: string } | undefined;
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    const l = (left ?? '').split(' ');
    if (l[4] !== '/' || right === undefined) continue;
    const r = right.split(' ');
    found = { dev: l[2]!, fstype: r[0] ?? '', source: r[1] ?? '' };
  }
  return found;
}

const STATUS: Record<string, string> = { V: 'verified', C: 'corrupted' };

export function readRootfsStatus(probe: RootfsProbe): RootfsStatusSpec {
  const expected = probe.cmdline().get('bronze.roothash') ?? '';
  const root = rootMount(probe.mountinfo());
  if (!root) return { device: '', filesystemType: '', verified: false, expectedRootHash: expected, reason: 'no mount of / in /proc/self/mountinfo' };
  const spec: RootfsStatusSpec = { device: root.source, filesystemType: root.fstype, verified: false, expectedRootHash: expected };
  const name = probe.sysfs(`dev/block/${root.dev}/dm/name`)?.trim();
  if (!name) return { ...spec, reason: `/ is mounted from ${root.source} (${root.dev}), not a device-mapper device: nothing verifies it` };
  spec.mapperName = name;
  try {
    const table = probe.dm(name, true);
    if (`${table.major}:${table.minor}` !== root.dev) return { ...spec, reason: `device-mapper ${name} is ${table.major}:${table.minor}, / is on ${root.dev}` };
    const verity = table.targets.length === 1 && table.targets[0]!.type === 'verity' ? parseVerityTable(table.targets[0]!.text) : undefined;
    if (!verity) return { ...spec, reason: `device-mapper ${name} is ${table.targets.map((t) => t.type).join(' + ') || 'empty'}, not one dm-verity target` };
    Object.assign(spec, { rootHash: verity.rootHash, hashAlgorithm: verity.algorithm, dataBlockSize: verity.dataBlockSize, dataBlocks: verity.dataBlocks });
    const covered = verity.dataBlocks * (verity.dataBlockSize / 512);
    const status = probe.dm(name, false).targets[0]?.text.trim() ?? '';
    spec.status = STATUS[status] ?? status;
    const reason = [
      status !== 'V' && `the verity target's status is ${JSON.stringify(status)}${status === 'C' ? ' (a corrupted block was read)' : ''}`,
      !table.readOnly && `device-mapper ${name} is writable`,
      table.targets[0]!.start !== 0 || table.targets[0]!.length !== covered ? `the verity target covers sectors ${table.targets[0]!.start}+${table.targets[0]!.length}, its tree ${covered}` : false,
      !expected && 'the kernel command line has no bronze.roothash=',
      expected && expected !== verity.rootHash && `the root hash ${verity.rootHash} is not the command line's ${expected}`,
    ].filter((r): r is string => Boolean(r));
    spec.verified = reason.length === 0;
    if (reason.length > 0) spec.reason = reason.join('; ');
    return spec;
  } catch (e) {
    return { ...spec, reason: `device-mapper ${name}: ${(e as Error).message}` };
  }
}
