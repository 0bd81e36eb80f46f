// MountStatuses.runtime.talos.dev: the system partitions machined mounted (STATE, EPHEMERAL),
// id the partition's label, each as the kernel's mount table shows it. Bronze encrypts nothing
// (the configuration refuses encryption), so `encrypted` is false.
import type { MountStatusSpec } from '../contract/resources/mount-status.ts';
import type { MountInfo } from './mounts.ts';
import type { MountedVolumes } from './volumes.ts';

/** id → spec for each mounted volume the mount table still shows at its target. */
export function mountStatuses(volumes: Pick<MountedVolumes, 'mounted'> | undefined, table: MountInfo[]): Map<string, MountStatusSpec> {
  const out = new Map<string, MountStatusSpec>();
  for (const v of volumes?.mounted ?? []) {
    const m = table.filter((t) => t.target === v.target).at(-1);
    if (!m) continue;
    out.set(v.label, { source: v.device, target: v.target, filesystemType: m.fstype, options: m.options, encrypted: false });
  }
  return out;
}
