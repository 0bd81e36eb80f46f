// Containers' logs: the shim (containerd 1.6 runtime/v2, pkg/process/io.go) appends the task's
// stdout and stderr to a file when Tasks.Create names a `file://` URI, and keeps writing across
// task restarts (same file, O_APPEND). Here: where that file is, reading its last lines,
// following it, and keeping it bounded.
import fs from 'node:fs';
import path from 'node:path';
import { sleep } from '../lib/sleep.ts';

/** Where containers' logs live on a node (EPHEMERAL): `<dir>/<namespace>/<id>.log`. */
export const CONTAINER_LOG_DIR = '/var/log/containers';

/** Size at which a log is rotated to `<id>.log.1` (one old file kept). */
export const LOG_MAX_BYTES = 16 * 1024 * 1024;

export function containerLogPath(dir: string, namespace: string, id: string): string {
  if (id.includes('/') || id === '.' || id === '..' || namespace.includes('/')) throw new Error(`invalid container id ${namespace}/${id}`);
  return path.join(dir, namespace, `${id}.log`);
}

/** The `file://` URI the shim takes for stdout/stderr. */
export function logURI(file: string): string {
  return `file://${file}`;
}

const CHUNK = 64 * 1024;

/** Offset in `fd` (of `size` bytes) where its last `lines` lines begin (-1: 0). */
export function tailOffset(fd: number, size: number, lines: number): number {
  if (lines < 0) return 0;
  if (lines === 0) return size;
  let pos = size;
  let seen = 0;
  const buf = Buffer.alloc(CHUNK);
  // The file's last byte is normally the last line's newline, which does not start a new line.
  let skipFinal = true;
  while (pos > 0) {
    const len = Math.min(CHUNK, pos);
    pos -= len;
    fs.readSync(fd, buf, 0, len, pos);
    for (let i = len - 1; i >= 0; i--) {
      if (buf[i] !== 0x0a) {
        skipFinal = false;
        continue;
      }
      if (skipFinal) {
        skipFinal = false;
        continue;
      }
      if (++seen === lines) return pos + i + 1;
    }
  }
  return 0;
}

export interface ReadLogOptions {
  follow: boolean;
  /** Last lines to start with; -1: the whole file. */
  tailLines: number;
  signal?: AbortSignal;
  /** How often to look for more while following (ms). */
  pollMs?: number;
}

/**
 * The log's last `tailLines` lines, then with `follow` what is appended, until `signal` aborts.
 * Following polls the file's size (fs.watch misses writes through another mount namespace's
 * view and needs an inotify watch per reader); a file that shrank was rotated or trimmed and is
 * read again from its start.
 */
export async function* readLog(file: string, opts: ReadLogOptions): AsyncIterable<Uint8Array> {
  const { signal } = opts;
  let fd: number | undefined;
  let ino = -1;
  let pos = 0;
  const open = (fromTail: boolean): boolean => {
    try {
      const f = fs.openSync(file, 'r');
      const st = fs.fstatSync(f);
      if (fd !== undefined) fs.closeSync(fd);
      fd = f;
      ino = st.ino;
      pos = fromTail ? tailOffset(f, st.size, opts.tailLines) : 0;
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  };
  if (!open(true)) {
    if (!opts.follow) throw Object.assign(new Error(`no log for ${path.basename(file, '.log')}`), { code: 'ENOENT' });
  }
  const buf = Buffer.alloc(CHUNK);
  try {
    for (;;) {
      if (signal?.aborted) return;
      if (fd !== undefined) {
        const n = fs.readSync(fd, buf, 0, CHUNK, pos);
        if (n > 0) {
          pos += n;
          yield Buffer.from(buf.subarray(0, n));
          continue;
        }
      }
      if (!opts.follow) return;
      await sleep(opts.pollMs ?? 250, signal);
      // Rotated (a new inode at the path) or truncated: start over at the new file's start.
      let st: fs.Stats | undefined;
      try {
        st = fs.statSync(file);
      } catch {
        st = undefined;
      }
      if (st && (st.ino !== ino || st.size < pos)) open(false);
    }
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Keeps a log under `maxBytes`: once over, its content moves to `<file>.1` (replacing the older
 * one) and the file is truncated in place. Truncating, not renaming: the shim holds the file open
 * with O_APPEND, so its next write lands at the new end. What the task writes between the copy
 * and the truncation is lost (a few milliseconds), the price of not owning the writer.
 */
export function trimLog(file: string, maxBytes = LOG_MAX_BYTES): boolean {
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch {
    return false;
  }
  if (size <= maxBytes) return false;
  fs.copyFileSync(file, `${file}.1`);
  fs.truncateSync(file, 0);
  return true;
}
