// Copy (`bronzectl cp`, talosctl's `copy`): a .tar.gz of a file or a directory tree, streamed
// in chunks of common.Data, as Talos sends it. Entries are named relative to the root ("./",
// "a", "a/b"; a root that is a file is named by its base name) and keep their mode, owner and
// modification time; directories, regular files and symlinks are archived, sockets, devices
// and FIFOs skipped; symlinks are not followed (a root that is a symlink is). A file that
// cannot be opened is skipped with a line in machined's log; one that fails while being read
// fails the call. The archive is produced as the client reads it (gzip and the stream's
// backpressure pace the walk).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type * as grpc from '@grpc/grpc-js';
import { pack as tarPack, type Pack } from 'tar-stream';
import { invalidArgument, serverStream } from './common.ts';
import { fsError } from './files.ts';

const CHUNK = 64 * 1024;

type Header = Parameters<Pack['entry']>[0];

function headerOf(name: string, st: fs.Stats): Header {
  return { name, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, mtime: st.mtime };
}

function entryDone(p: Pack, header: Header, body?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => p.entry(header, body ?? Buffer.alloc(0), (err) => (err ? reject(err) : resolve())));
}

/** Writes one regular file's `size` bytes into the archive (zeros if it shrank meanwhile). */
async function fileEntry(p: Pack, header: Header, file: string, size: number, handle: fs.promises.FileHandle, signal?: AbortSignal): Promise<void> {
  let failed: Error | undefined;
  const done = new Promise<void>((resolve, reject) => {
    const sink = p.entry({ ...header, type: 'file', size }, (err) => (err ? reject(err) : resolve()));
    void (async () => {
      const buf = Buffer.alloc(CHUNK);
      let left = size;
      try {
        while (left > 0 && !signal?.aborted) {
          const { bytesRead } = await handle.read(buf, 0, Math.min(buf.length, left), null);
          const chunk = bytesRead > 0 ? Buffer.from(buf.subarray(0, bytesRead)) : Buffer.alloc(Math.min(CHUNK, left)); // shrank: pad
          left -= chunk.length;
          if (!sink.write(chunk)) await new Promise<void>((r) => sink.once('drain', () => r()));
        }
      } catch (err) {
        failed = fsError(err, 'read', file);
        sink.destroy(failed);
        return;
      }
      sink.end(undefined);
    })();
  });
  await done.catch((err) => {
    throw failed ?? err;
  });
}

export interface CopyLog {
  warn(msg: string): void;
}

/** Fills `p` with the tree at `root`, then finalizes it. */
export async function archive(p: Pack, root: string, log: CopyLog, signal?: AbortSignal): Promise<void> {
  let top = root;
  let st: fs.Stats;
  try {
    st = await fs.promises.lstat(top);
    if (st.isSymbolicLink()) {
      top = await fs.promises.realpath(top);
      st = await fs.promises.lstat(top);
    }
  } catch (err) {
    throw fsError(err, 'lstat', root);
  }

  const add = async (file: string, name: string, s: fs.Stats): Promise<void> => {
    if (signal?.aborted) return;
    if (s.isDirectory()) {
      await entryDone(p, { ...headerOf(name === '.' ? './' : `${name}/`, s), type: 'directory' });
      let names: string[];
      try {
        names = (await fs.promises.readdir(file)).sort();
      } catch (err) {
        log.warn(`copy: skipping the contents of ${file}: ${fsError(err, 'readdir', file).message}`);
        return;
      }
      for (const n of names) {
        const child = path.join(file, n);
        let cs: fs.Stats;
        try {
          cs = await fs.promises.lstat(child);
        } catch (err) {
          log.warn(`copy: skipping ${child}: ${fsError(err, 'lstat', child).message}`);
          continue;
        }
        await add(child, name === '.' ? n : `${name}/${n}`, cs);
      }
    } else if (s.isSymbolicLink()) {
      let target: string;
      try {
        target = await fs.promises.readlink(file);
      } catch (err) {
        log.warn(`copy: skipping ${file}: ${fsError(err, 'readlink', file).message}`);
        return;
      }
      await entryDone(p, { ...headerOf(name, s), type: 'symlink', linkname: target });
    } else if (s.isFile()) {
      let handle: fs.promises.FileHandle;
      try {
        handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      } catch (err) {
        log.warn(`copy: skipping ${file}: ${fsError(err, 'open', file).message}`);
        return;
      }
      try {
        await fileEntry(p, headerOf(name, s), file, s.size, handle, signal);
      } finally {
        await handle.close();
      }
    }
    // Sockets, devices and FIFOs: not archived.
  };
  await add(top, st.isDirectory() ? '.' : path.basename(top), st);
  p.finalize();
}

export function copyHandlers(log: CopyLog): Record<string, grpc.handleServerStreamingCall<any, any>> {
  return {
    Copy: serverStream<{ root_path?: string }, { bytes: Buffer }>(async (req, stream) => {
      const root = path.normalize(req.root_path ?? '');
      if (!req.root_path || !path.isAbsolute(root)) throw invalidArgument(`root_path must be an absolute path (got ${JSON.stringify(req.root_path ?? '')})`);
      const p = tarPack();
      const gzip = zlib.createGzip();
      let producerError: unknown;
      const producer = archive(p, root, log, stream.signal).catch((err: unknown) => {
        producerError = err;
        p.destroy(err as Error);
      });
      p.on('error', (err: Error) => gzip.destroy(err));
      p.pipe(gzip);
      try {
        for await (const chunk of gzip) {
          if (stream.closed) break;
          await stream.send({ bytes: chunk as Buffer });
        }
      } catch (err) {
        throw producerError ?? err;
      } finally {
        if (stream.closed) {
          p.destroy();
          gzip.destroy();
        }
        await producer;
      }
      if (producerError) throw producerError;
    }),
  };
}
