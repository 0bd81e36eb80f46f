// Filesystems for the installer, reset, repair and upgrades: making and repairing xfs
// (mkfs.xfs and xfs_repair, the foreign programs in the rootfs: no library makes or repairs
// xfs), copying raw images onto partitions, and mounting a partition for the length of one job.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { MNT_DETACH, MS, mount, sync, umount } from '../../lib/sys.ts';

const run = promisify(execFile);

/** Where the rootfs has an xfsprogs program; a host run falls back to PATH. */
function xfsTool(name: 'mkfs.xfs' | 'xfs_repair'): string {
  return fs.existsSync(`/usr/sbin/${name}`) ? `/usr/sbin/${name}` : name;
}

const TOOL_ENV = { PATH: '/usr/sbin:/sbin:/usr/bin:/bin' };

export interface MkfsOptions {
  /** The filesystem UUID (BOOT's must be the one GRUB searches for). */
  uuid?: string;
}

/** Makes a fresh xfs on `device`, labelled, replacing whatever was there. */
export async function mkfsXfs(device: string, label: string, o: MkfsOptions = {}): Promise<void> {
  const args = ['-q', '-f', '-L', label, ...(o.uuid ? ['-m', `uuid=${o.uuid}`] : []), device];
  // mkfs.xfs refuses filesystems under 300 MB unless it believes it runs under fstests; STATE
  // is 100 MiB (as Talos has it), so the fstests variables are set.
  const env = { ...TOOL_ENV, TEST_DIR: '1', TEST_DEV: '1', QA_CHECK_FS: '1' };
  try {
    await run(xfsTool('mkfs.xfs'), args, { env, timeout: 120_000 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`mkfs.xfs ${label} on ${device}: ${(e.stderr || e.message).trim()}`);
  }
}

/** xfs_repair did not repair the filesystem; dirtyLog: its log must be replayed by a mount first (exit 2). */
export class XfsRepairError extends Error {
  override name = 'XfsRepairError';
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly dirtyLog: boolean,
  ) {
    super(message);
  }
}

/**
 * Runs xfs_repair on an unmounted device, passing each line it prints to onLine. zeroLog adds
 * -L (a dirty log is zeroed: its changes are lost). Throws XfsRepairError unless it exits 0.
 */
export function xfsRepair(device: string, o: { zeroLog?: boolean; onLine?: (line: string) => void; timeoutMs?: number } = {}): Promise<void> {
  const args = [...(o.zeroLog ? ['-L'] : []), device];
  return new Promise((resolve, reject) => {
    const child = spawn(xfsTool('xfs_repair'), args, { env: TOOL_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    let partial = '';
    const onData = (chunk: Buffer) => {
      partial += chunk.toString('utf8');
      let nl: number;
      while ((nl = partial.indexOf('\n')) >= 0) {
        const line = partial.slice(0, nl).trimEnd();
        partial = partial.slice(nl + 1);
        if (!line) continue;
        tail.push(line);
        if (tail.length > 5) tail.shift();
        o.onLine?.(line);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 30 * 60_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new XfsRepairError(`xfs_repair could not run: ${err.message}`, null, false));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (partial.trim()) onData(Buffer.from('\n'));
      if (code === 0) return resolve();
      const last = tail.length ? `: ${tail.join(' / ')}` : '';
      const how = signal ? `was killed by ${signal}` : `exited with ${code}`;
      reject(new XfsRepairError(`xfs_repair ${how}${last}`, code, code === 2));
    });
  });
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
