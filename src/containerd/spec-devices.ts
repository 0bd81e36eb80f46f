// What a spec takes from the host: its device nodes, for privileged containers (containerd's
// oci.HostDevices), and the open-files limit runc may hand on.
import fs from 'node:fs';
import path from 'node:path';
import { parseProcStatus } from '../lib/capabilities.ts';
import type { HostDevice } from './spec.ts';

/** Directories under /dev whose nodes belong to the container's own mounts or to the host's bookkeeping. */
const SKIP_DIRS = new Set(['pts', 'shm', 'fd', 'mqueue', '.lxc', '.lxd-mounts', '.udev']);

/** Linux's major()/minor() of a dev_t (glibc's gnu_dev_major/minor). */
export function devMajorMinor(rdev: bigint): { major: number; minor: number } {
  const major = ((rdev >> 8n) & 0xfffn) | ((rdev >> 32n) & ~0xfffn);
  const minor = (rdev & 0xffn) | ((rdev >> 12n) & ~0xffn);
  return { major: Number(major), minor: Number(minor) };
}

/** Every character and block device under `dir` (symlinks not followed, /dev/console left out as containerd does). */
export function readHostDevices(dir = '/dev'): HostDevice[] {
  const out: HostDevice[] = [];
  const walk = (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name)) walk(p);
        continue;
      }
      if (!e.isCharacterDevice() && !e.isBlockDevice()) continue;
      if (p === path.join(dir, 'console')) continue;
      let st: fs.BigIntStats;
      try {
        st = fs.lstatSync(p, { bigint: true });
      } catch {
        continue; // gone since readdir
      }
      const { major, minor } = devMajorMinor(st.rdev);
      out.push({ path: p, type: e.isCharacterDevice() ? 'c' : 'b', major, minor, fileMode: Number(st.mode & 0o7777n), uid: Number(st.uid), gid: Number(st.gid) });
    }
  };
  walk(dir);
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

/** This process's hard RLIMIT_NOFILE, from /proc/self/limits (Node has no getrlimit); undefined when unlimited or unreadable. */
export function ownNofileHard(limitsFile = '/proc/self/limits'): number | undefined {
  try {
    const line = fs.readFileSync(limitsFile, 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    const hard = line?.trim().split(/\s+/)[4];
    return hard && /^\d+$/.test(hard) ? Number(hard) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The capabilities in this process's bounding set, by number (/proc/self/status CapBnd): what
 * runc, started by containerd started by this process, can grant at most. undefined when unreadable.
 */
export function ownBoundingCaps(statusFile = '/proc/self/status'): Set<number> | undefined {
  let mask: bigint;
  try {
    mask = parseProcStatus(fs.readFileSync(statusFile, 'utf8')).capBnd;
  } catch {
    return undefined;
  }
  const out = new Set<number>();
  for (let i = 0; i < 64; i++) if ((mask >> BigInt(i)) & 1n) out.add(i);
  return out;
}
