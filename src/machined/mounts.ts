// The mounts machined makes at boot, as data. /proc, /sys, /dev (devtmpfs), /run and /system
// (tmpfs) are made by preinit and handed over: /run holds the extracted native module machined
// needs before it can mount anything, /system the sockets of the services machined starts
// before it has loaded (early.ts), /proc the kernel command line networkd reads before its
// first DHCP; machined checks they are there and mounts the rest.
import fs from 'node:fs';
import { MS, MNT_DETACH, mount, umount } from '../lib/sys.ts';
import type { Logger } from '../lib/log.ts';

export interface MountSpec {
  target: string;
  fstype: string;
  source: string;
  flags: number;
  data?: string;
  /** Made by preinit before machined starts; only verified here. */
  inherited?: boolean;
  /** Mounted only where this path exists (a kernel directory that is there only on some machines). */
  onlyIf?: string;
}

const NSD = MS.NOSUID | MS.NODEV;

export const EARLY_MOUNTS: readonly MountSpec[] = [
  { target: '/proc', fstype: 'proc', source: 'proc', flags: NSD | MS.NOEXEC, inherited: true },
  { target: '/sys', fstype: 'sysfs', source: 'sysfs', flags: NSD | MS.NOEXEC, inherited: true },
  { target: '/dev', fstype: 'devtmpfs', source: 'devtmpfs', flags: MS.NOSUID, data: 'mode=0755', inherited: true },
  { target: '/run', fstype: 'tmpfs', source: 'tmpfs', flags: NSD, data: 'mode=0755', inherited: true },
  { target: '/dev/pts', fstype: 'devpts', source: 'devpts', flags: MS.NOSUID | MS.NOEXEC, data: 'gid=5,mode=0620,ptmxmode=0666' },
  { target: '/dev/shm', fstype: 'tmpfs', source: 'shm', flags: NSD | MS.NOEXEC, data: 'mode=1777' },
  { target: '/system', fstype: 'tmpfs', source: 'system', flags: NSD, data: 'mode=0755', inherited: true },
  { target: '/tmp', fstype: 'tmpfs', source: 'tmpfs', flags: NSD, data: 'mode=1777,size=64m' },
  // Memory-backed until the node is installed and EPHEMERAL is mounted here instead.
  { target: '/var', fstype: 'tmpfs', source: 'var', flags: NSD, data: 'mode=0755' },
  { target: '/sys/fs/cgroup', fstype: 'cgroup2', source: 'cgroup2', flags: NSD | MS.NOEXEC, data: 'nsdelegate' },
  // The UEFI variables (Secure Boot state, the boot loader's), read-only; only on a UEFI boot.
  { target: '/sys/firmware/efi/efivars', fstype: 'efivarfs', source: 'efivarfs', flags: NSD | MS.NOEXEC | MS.RDONLY, onlyIf: '/sys/firmware/efi' },
];

/** Files under /system that /etc's links point to (see image-builder/rootfs.sh). */
export const SYSTEM_ETC_FILES: ReadonlyArray<{ path: string; initial: string }> = [
  { path: 'hosts', initial: '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' },
  { path: 'resolv.conf', initial: '' },
  // The hostname, as on Talos: machined writes it when it sets the boot hostname, networkd
  // when the hostname changes.
  { path: 'hostname', initial: '' },
];

export interface MountInfo {
  target: string;
  fstype: string;
  source: string;
  /** The mount's options and the filesystem's (mountinfo's fields 6 and 11), as written there. */
  options: string[];
}

export function parseMountinfo(text: string): MountInfo[] {
  const out: MountInfo[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const [left, right] = line.split(' - ');
    const l = left!.split(' ');
    const r = (right ?? '').split(' ');
    const options = [...new Set([...(l[5] ?? '').split(','), ...(r[2] ?? '').split(',')].filter(Boolean))];
    out.push({ target: unescape(l[4]!), fstype: r[0] ?? '', source: unescape(r[1] ?? ''), options });
  }
  return out;
}

const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

export function currentMounts(): MountInfo[] {
  return parseMountinfo(fs.readFileSync('/proc/self/mountinfo', 'utf8'));
}

export function mountEarly(log: Logger): void {
  // What is mounted, read once /proc is there (not once per mount: 30 ms of machined's boot
  // under QEMU/TCG), then kept up to date here.
  let present: Set<string> | undefined;
  const mounted = (target: string) => {
    if (!present && fs.existsSync('/proc/self/mountinfo')) present = new Set(currentMounts().map((c) => c.target));
    return present?.has(target) ?? false;
  };
  for (const m of EARLY_MOUNTS) {
    if (m.onlyIf && !fs.existsSync(m.onlyIf)) continue;
    if (mounted(m.target)) {
      log.info(`mount ${m.target}: ${m.inherited ? 'handed over by preinit' : 'already mounted'}`);
      continue;
    }
    if (m.inherited) log.warn(`mount ${m.target}: expected from preinit, mounting it now`);
    fs.mkdirSync(m.target, { recursive: true });
    mount(m.source, m.target, m.fstype, m.flags, m.data ?? null);
    present?.add(m.target);
    log.info(`mount ${m.target} (${m.fstype})`);
  }
}

/** /system/etc/{hosts,resolv.conf,hostname}: their first contents (networkd rewrites them). */
export function setupSystemEtc(log: Logger): void {
  fs.mkdirSync('/system/etc', { recursive: true, mode: 0o755 });
  for (const dir of ['/system/run', '/system/state', '/system/var']) fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const f of SYSTEM_ETC_FILES) {
    const src = `/system/etc/${f.path}`;
    fs.writeFileSync(src, f.initial, { mode: 0o644 });
    log.info(`wrote ${src}`);
  }
}

/** Unmounts everything but the root and the kernel filesystems, deepest first. */
export function unmountAll(log: Logger): void {
  // /run holds the native module machined itself has mapped: it stays, like /dev.
  const keep = new Set(['/', '/proc', '/sys', '/dev', '/run']);
  const targets = currentMounts()
    .map((m) => m.target)
    .filter((t) => !keep.has(t))
    .reverse();
  for (const t of targets) {
    try {
      umount(t);
    } catch (err) {
      try {
        umount(t, MNT_DETACH);
        log.warn(`unmount ${t}: busy, detached (${(err as Error).message})`);
      } catch (err2) {
        log.warn(`unmount ${t}: ${(err2 as Error).message}`);
      }
    }
  }
}
