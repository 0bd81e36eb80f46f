// Thin, typed wrappers over the libc calls Bronze needs and Node lacks. Each throws a
// SyscallError naming the call, its arguments and errno.
import fs from 'node:fs';
import os from 'node:os';
import { koffi } from './native.ts';

/** ENOENT for 2, and so on ("errno N" for numbers Node does not name). */
export function errnoName(errno: number): string {
  return Object.entries(os.constants.errno).find(([, v]) => v === errno)?.[0] ?? `errno ${errno}`;
}

export class SyscallError extends Error {
  constructor(
    readonly call: string,
    readonly errno: number,
  ) {
    super(`${call}: ${errnoName(errno)}`);
  }
}

export const MS = {
  RDONLY: 0x1,
  NOSUID: 0x2,
  NODEV: 0x4,
  NOEXEC: 0x8,
  NOATIME: 0x400,
  REMOUNT: 0x20,
  BIND: 0x1000,
  MOVE: 0x2000,
  REC: 0x4000,
  PRIVATE: 1 << 18,
  SHARED: 1 << 20,
  RELATIME: 1 << 21,
} as const;

export const MNT_DETACH = 2;

export const REBOOT = {
  RESTART: 0x01234567,
  HALT: 0xcdef0123,
  POWER_OFF: 0x4321fedc,
  CAD_ON: 0x89abcdef,
  CAD_OFF: 0,
} as const;

interface Libc {
  mount: (src: string | null, target: string, fstype: string | null, flags: number, data: string | null) => number;
  umount2: (target: string, flags: number) => number;
  sethostname: (name: string, len: number) => number;
  reboot: (cmd: number) => number;
  sync: () => void;
  waitpid: (pid: number, status: number[], options: number) => number;
  prctl: (option: number, arg2: number, arg3: number, arg4: number, arg5: number) => number;
  ioctl: (fd: number, request: number, ...variadic: unknown[]) => number;
}

let libc: Libc | undefined;

function lib(): Libc {
  if (libc) return libc;
  const k = koffi();
  const c = k.load('libc.so.6');
  libc = {
    mount: c.func('int mount(const char *src, const char *target, const char *fstype, unsigned long flags, const char *data)'),
    umount2: c.func('int umount2(const char *target, int flags)'),
    sethostname: c.func('int sethostname(const char *name, size_t len)'),
    reboot: c.func('int reboot(int cmd)'),
    sync: c.func('void sync(void)'),
    waitpid: c.func('int waitpid(int pid, _Out_ int *status, int options)'),
    prctl: c.func('int prctl(int option, unsigned long arg2, unsigned long arg3, unsigned long arg4, unsigned long arg5)'),
    ioctl: c.func('int ioctl(int fd, unsigned long request, ...)'),
  };
  return libc;
}

/** `rc`, or a SyscallError naming `call` and errno when the call failed (rc < 0). */
export function checkSyscall(call: string, rc: number): number {
  if (rc < 0) throw new SyscallError(call, koffi().errno());
  return rc;
}
const check = checkSyscall;

/** prctl(2), checked: `what` names the call in the error. */
export function prctl(what: string, option: number, arg2 = 0, arg3 = 0, arg4 = 0, arg5 = 0): number {
  return check(what, lib().prctl(option, arg2, arg3, arg4, arg5));
}

export function mount(src: string | null, target: string, fstype: string | null, flags: number, data: string | null = null): void {
  check(`mount(${src ?? 'none'}, ${target}, ${fstype ?? 'none'})`, lib().mount(src, target, fstype, flags, data));
}

export function umount(target: string, flags = 0): void {
  check(`umount(${target})`, lib().umount2(target, flags));
}

export function sethostname(name: string): void {
  check(`sethostname(${name})`, lib().sethostname(name, Buffer.byteLength(name)));
}

/** BLKRRPART (_IO(0x12, 95)): the kernel re-reads a disk's partition table (EBUSY while one is mounted). */
export const BLKRRPART = 0x125f;

/** ioctl(fd, BLKRRPART): makes the kernel show a freshly written partition table. */
export function rereadPartitions(fd: number, device: string): void {
  check(`ioctl(${device}, BLKRRPART)`, lib().ioctl(fd, BLKRRPART, 'int', 0));
}

/** FITRIM (_IOWR('X', 121, struct fstrim_range)): discard a mounted filesystem's unused blocks. */
export const FITRIM = 0xc0185879;

/**
 * ioctl(fd of `mountpoint`, FITRIM) over [start, start+len) skipping free extents shorter than
 * minLength; returns the bytes the filesystem passed down to be discarded.
 */
export function fstrim(mountpoint: string, range: { start?: number; len?: number; minLength?: number } = {}): number {
  const buf = Buffer.alloc(24);
  buf.writeBigUInt64LE(BigInt(range.start ?? 0), 0);
  buf.writeBigUInt64LE(range.len === undefined ? 0xffff_ffff_ffff_ffffn : BigInt(range.len), 8);
  buf.writeBigUInt64LE(BigInt(range.minLength ?? 0), 16);
  const fd = fs.openSync(mountpoint, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    check(`ioctl(${mountpoint}, FITRIM)`, lib().ioctl(fd, FITRIM, 'uint8_t *', buf));
  } finally {
    fs.closeSync(fd);
  }
  return Number(buf.readBigUInt64LE(8));
}

export function sync(): void {
  lib().sync();
}

export function reboot(cmd: number): void {
  check('reboot', lib().reboot(cmd));
}

export const WNOHANG = 1;

/** waitpid(pid, WNOHANG): the reaped pid, or 0 when it has not exited yet. */
export function reap(pid: number): number {
  const status = [0];
  const rc = lib().waitpid(pid, status, WNOHANG);
  if (rc < 0) {
    const errno = koffi().errno();
    if (errno === os.constants.errno.ECHILD) return 0;
    throw new SyscallError(`waitpid(${pid})`, errno);
  }
  return rc;
}

const PR_SET_CHILD_SUBREAPER = 36;

/** Makes this process the reaper of its orphaned descendants, as PID 1 is for everyone. */
export function setChildSubreaper(): void {
  prctl('prctl(PR_SET_CHILD_SUBREAPER)', PR_SET_CHILD_SUBREAPER, 1);
}
