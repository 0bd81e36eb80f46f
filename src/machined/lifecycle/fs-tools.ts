// Filesystems for the installer, reset and upgrades: making xfs (mkfs.xfs, the one foreign
// program in the rootfs: no library makes xfs), copying raw images onto partitions, and
// mounting a partition for the length of one job.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { MNT_DETACH, MS, mount, sync, umount } from '../../lib/sys.ts';

const run = promisify(execFile);

/** Where the rootfs has mkfs.xfs; a host run falls back to PATH. */
function mkfsXfsPath(): string {
  return fs.existsSync('/usr/sbin/mkfs.xfs') ? '/usr/sbin/mkfs.xfs' : 'mkfs.xfs';
}

export interface MkfsOptions {
  /** The filesystem UUID (BOOT's must be the one GRUB searches for). */
  uuid?: string;
}

/** Makes a fresh xfs on `device`, labelled, replacing whatever was there. */
export async function mkfsXfs(device: string, label: string, o: MkfsOptions = {}): Promise<void> {
  const args = ['-q', '-f', '-L', label, ...(o.uuid ? ['-m', `uuid=${o.uuid}`] : []), device];
  // mkfs.xfs refuses filesystems under 300 MB unless it believes it runs under fstests; STATE
  // is 100 MiB (as Talos has it), so the fstests variables are set.
  const env = { PATH: '/usr/sbin:/sbin:/usr/bin:/bin', TEST_DIR: '1', TEST_DEV: '1', QA_CHECK_FS: '1' };
  try {
    await run(mkfsXfsPath(), args, { env, timeout: 120_000 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`mkfs.xfs ${label} on ${device}: ${(e.stderr || e.message).trim()}`);
  }
}

/**
 * Copies a whole file onto a device (or into a new file, with create) at `offset`, reporting
 * the bytes copied so far, and flushes it.
 */
export async function copyImage(image: string, device: string, o: { offset?: number; onBytes?: (n: number) => void; create?: boolean } = {}): Promise<number> {
  const { offset = 0, onBytes } = o;
  const src = await fs.promises.open(image, 'r');
  const dst = await fs.promises.open(device, o.create ? 'w' : 'r+', 0o644);
  try {
    const buf = Buffer.alloc(4 << 20);
    let pos = 0;
    for (;;) {
      const { bytesRead } = await src.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      let written = 0;
      while (written < bytesRead) written += (await dst.write(buf, written, bytesRead - written, offset + pos + written)).bytesWritten;
      pos += bytesRead;
      onBytes?.(pos);
    }
    await dst.sync();
    return pos;
  } finally {
    await src.close();
    await dst.close();
  }
}

/** Where scratch mounts go. */
export const SCRATCH_MOUNTS = '/run/bronze/mnt';

/**
 * Mounts `device` at <root>/<name> for the length of `fn`, then syncs and unmounts it (also
 * when fn throws). The mount is nosuid, nodev, noexec.
 */
export async function withMount<T>(device: string, fstype: string, name: string, fn: (dir: string) => Promise<T>, o: { readOnly?: boolean; root?: string } = {}): Promise<T> {
  const dir = path.join(o.root ?? SCRATCH_MOUNTS, name);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  mount(device, dir, fstype, MS.NOSUID | MS.NODEV | MS.NOEXEC | (o.readOnly ? MS.RDONLY : 0));
  let result: T;
  try {
    result = await fn(dir);
  } catch (err) {
    release(dir);
    throw err; // fn's error, not a later unmount's
  }
  sync();
  umount(dir); // a failure here is the caller's: what fn wrote may not be on disk
  return result;
}

/** Unmounts after a failure, detaching if busy: a second mount must never stack on it. */
function release(dir: string): void {
  try {
    sync();
    umount(dir);
  } catch {
    try {
      umount(dir, MNT_DETACH);
    } catch {
      // nothing mounted there any more
    }
  }
}

/** Copies a directory tree (files and directories only). */
export function copyTree(from: string, to: string): void {
  fs.cpSync(from, to, { recursive: true, force: true, dereference: true });
}
