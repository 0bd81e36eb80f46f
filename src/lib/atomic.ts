// Atomic file replacement: a temporary file beside the target, fsync, rename over the target,
// fsync of the directory. A crash or power cut leaves either the old file or the new one,
// never a half-written one. On failure the temporary file is removed.
//
// Written by root into a directory another user owns (a daemon's secrets directory, made by
// machined: lib/daemon-users.ts), the file takes that directory's owner and group, and is
// group-readable when the directory is shared with its group (setgid and group-readable):
// the daemon reads what machined writes for it.
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';

export interface AtomicWriteOptions {
  /** File mode, applied whatever the umask. Default 0600. */
  mode?: number;
  /** Mode of parent directories created on the way. Default 0700. */
  dirMode?: number;
}

export async function writeFileAtomic(file: string, data: string | Uint8Array, opts: AtomicWriteOptions = {}): Promise<void> {
  const mode = opts.mode ?? 0o600;
  const dir = path.dirname(path.resolve(file));
  await mkdir(dir, { recursive: true, mode: opts.dirMode ?? 0o700 });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let created = false;
  try {
    const fh = await open(tmp, 'wx', mode);
    created = true;
    try {
      const owner = await directoryOwner(dir);
      if (owner) await fh.chown(owner.uid, owner.gid);
      await fh.chmod(owner?.groupRead ? mode | 0o040 : mode);
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
    created = false;
  } finally {
    if (created) await unlink(tmp).catch(() => {});
  }
  const d = await open(dir, 'r');
  try {
    await d.sync();
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic.
  } finally {
    await d.close();
  }
}

/** The directory's owner, when this process is root and the directory belongs to another user. */
async function directoryOwner(dir: string): Promise<{ uid: number; gid: number; groupRead: boolean } | undefined> {
  if (process.geteuid?.() !== 0) return undefined;
  const st = await stat(dir);
  return st.uid === 0 ? undefined : { uid: st.uid, gid: st.gid, groupRead: (st.mode & 0o2040) === 0o2040 };
}
