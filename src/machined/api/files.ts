// List and Read: the node's files.
//
// List follows Talos: the root itself comes first (relative name '.'), then its entries in
// lexical order, depth first; without recurse only the root's direct entries, with recurse
// down to recursion_depth levels (0: no limit). A root that is a symlink is followed; symlinks
// below it are reported, not followed. The types filter decides what is sent, not what is
// walked. An entry that cannot be read is sent with its error set; a root that cannot be read
// fails the call (NOT_FOUND, PERMISSION_DENIED, ... naming the path).
//
// Read streams a regular file in chunks (common.Data); a directory or any other kind of file
// is INVALID_ARGUMENT. Relative paths are taken from '/', machined's working directory.

import fs from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { ApiError, errnoStatus, invalidArgument, isErrno, serverStream } from './common.ts';

// Go's fs.FileMode bits, which Talos sends as FileInfo.mode.
export const GO_MODE = {
  DIR: 1 << 31,
  APPEND: 1 << 30,
  EXCLUSIVE: 1 << 29,
  TEMPORARY: 1 << 28,
  SYMLINK: 1 << 27,
  DEVICE: 1 << 26,
  NAMED_PIPE: 1 << 25,
  SOCKET: 1 << 24,
  SETUID: 1 << 23,
  SETGID: 1 << 22,
  CHAR_DEVICE: 1 << 21,
  STICKY: 1 << 20,
  IRREGULAR: 1 << 19,
} as const;

const S_IFMT = 0o170000;

/** A Unix st_mode as Go's fs.FileMode (what os.Lstat reports), unsigned 32-bit. */
export function goFileMode(mode: number): number {
  let out = mode & 0o777;
  switch (mode & S_IFMT) {
    case 0o060000:
      out |= GO_MODE.DEVICE;
      break;
    case 0o020000:
      out |= GO_MODE.DEVICE | GO_MODE.CHAR_DEVICE;
      break;
    case 0o040000:
      out |= GO_MODE.DIR;
      break;
    case 0o010000:
      out |= GO_MODE.NAMED_PIPE;
      break;
    case 0o120000:
      out |= GO_MODE.SYMLINK;
      break;
    case 0o140000:
      out |= GO_MODE.SOCKET;
      break;
  }
  if (mode & 0o2000) out |= GO_MODE.SETGID;
  if (mode & 0o4000) out |= GO_MODE.SETUID;
  if (mode & 0o1000) out |= GO_MODE.STICKY;
  return out >>> 0;
}

export type FileType = 'REGULAR' | 'DIRECTORY' | 'SYMLINK';

export function fileType(st: fs.Stats): FileType | undefined {
  if (st.isFile()) return 'REGULAR';
  if (st.isDirectory()) return 'DIRECTORY';
  if (st.isSymbolicLink()) return 'SYMLINK';
  return undefined;
}

/** A filesystem error as an ApiError: `<op> <path>: <reason>` with the matching status. */
export function fsError(err: unknown, op: string, p: string): ApiError {
  if (!isErrno(err)) return new ApiError(grpc.status.INTERNAL, `${op} ${p}: ${String((err as Error)?.message ?? err)}`);
  const reason = err.message.replace(/^[A-Z]+: /, '').replace(/, \w+ '.*'$/, '');
  return new ApiError(errnoStatus(err.code), `${op} ${p}: ${reason}`);
}

export interface WireFileInfo {
  name: string;
  relative_name: string;
  size?: number;
  mode?: number;
  modified?: number;
  is_dir?: boolean;
  link?: string;
  uid?: number;
  gid?: number;
  error?: string;
}

export function toFileInfo(name: string, relative: string, st: fs.Stats, link: string): WireFileInfo {
  return {
    name,
    relative_name: relative,
    size: st.size,
    mode: goFileMode(st.mode),
    modified: Math.floor(st.mtimeMs / 1000),
    is_dir: st.isDirectory(),
    link,
    uid: st.uid,
    gid: st.gid,
  };
}

export interface ListOptions {
  root: string;
  /** Levels below the root to list; -1: no limit. */
  maxDepth: number;
  /** Empty: every type. */
  types: readonly FileType[];
  signal?: AbortSignal;
}

/** The List walk, as FileInfo messages. Throws an ApiError when the root cannot be read. */
export async function* walk(opts: ListOptions): AsyncGenerator<WireFileInfo> {
  let root = opts.root;
  let rootStat: fs.Stats;
  try {
    rootStat = await fs.promises.lstat(root);
    if (rootStat.isSymbolicLink()) {
      root = await fs.promises.realpath(root);
      rootStat = await fs.promises.lstat(root);
    }
  } catch (err) {
    throw fsError(err, 'lstat', opts.root);
  }
  const wanted = (st: fs.Stats) => opts.types.length === 0 || opts.types.includes(fileType(st)!);

  if (!rootStat.isDirectory()) {
    if (wanted(rootStat)) yield toFileInfo(root, path.basename(root), rootStat, '');
    return;
  }

  async function* visit(dir: string, rel: string, depth: number, st: fs.Stats): AsyncGenerator<WireFileInfo> {
    if (opts.signal?.aborted) return;
    let link = '';
    if (st.isSymbolicLink()) {
      try {
        link = await fs.promises.readlink(dir);
      } catch (err) {
        yield { name: dir, relative_name: rel, error: fsError(err, 'readlink', dir).message };
        return;
      }
    }
    if (wanted(st)) yield toFileInfo(dir, rel, st, link);
    if (!st.isDirectory() || (opts.maxDepth >= 0 && depth >= opts.maxDepth)) return;
    let names: string[];
    try {
      names = (await fs.promises.readdir(dir)).sort();
    } catch (err) {
      yield { name: dir, relative_name: rel, error: fsError(err, 'readdir', dir).message };
      return;
    }
    for (const name of names) {
      const full = path.join(dir, name);
      const childRel = rel === '.' ? name : path.join(rel, name);
      let childStat: fs.Stats;
      try {
        childStat = await fs.promises.lstat(full);
      } catch (err) {
        yield { name: full, relative_name: childRel, error: fsError(err, 'lstat', full).message };
        continue;
      }
      yield* visit(full, childRel, depth + 1, childStat);
    }
  }
  yield* visit(root, '.', 0, rootStat);
}

const TYPE_NAMES: Record<string | number, FileType> = { 0: 'REGULAR', 1: 'DIRECTORY', 2: 'SYMLINK', REGULAR: 'REGULAR', DIRECTORY: 'DIRECTORY', SYMLINK: 'SYMLINK' };

export interface ListRequest {
  root?: string;
  recurse?: boolean;
  recursion_depth?: number;
  types?: Array<string | number>;
}

export function listOptions(req: ListRequest): Omit<ListOptions, 'signal'> {
  const depth = Number(req.recursion_depth ?? 0);
  if (depth < 0) throw invalidArgument(`recursion_depth must not be negative (got ${depth})`);
  const types = (req.types ?? []).map((t) => {
    const type = TYPE_NAMES[t];
    if (!type) throw invalidArgument(`unknown file type ${JSON.stringify(t)}`);
    return type;
  });
  return {
    root: path.resolve('/', req.root || '/'),
    maxDepth: req.recurse ? (depth === 0 ? -1 : depth) : 1,
    types,
  };
}

/** Chunk size of Read. */
export const READ_CHUNK = 64 * 1024;

export function filesHandlers(): Record<string, grpc.handleServerStreamingCall<any, any>> {
  return {
    List: serverStream<ListRequest, WireFileInfo>(async (req, stream) => {
      for await (const info of walk({ ...listOptions(req), signal: stream.signal })) {
        if (stream.closed) return;
        await stream.send(info);
      }
    }),
    Read: serverStream<{ path?: string }, { bytes: Buffer }>(async (req, stream) => {
      if (!req.path) throw invalidArgument('path is required');
      const file = path.resolve('/', req.path);
      const check = (st: fs.Stats) => {
        if (st.isDirectory()) throw invalidArgument(`read ${file}: is a directory`);
        if (!st.isFile()) throw invalidArgument(`read ${file}: not a regular file`);
      };
      // Checked before opening (opening a FIFO could block), and again on what was opened.
      try {
        check(await fs.promises.stat(file));
      } catch (err) {
        throw err instanceof ApiError ? err : fsError(err, 'stat', file);
      }
      let handle: fs.promises.FileHandle;
      try {
        handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      } catch (err) {
        throw fsError(err, 'open', file);
      }
      try {
        check(await handle.stat());
        const buf = Buffer.alloc(READ_CHUNK);
        for (;;) {
          if (stream.closed) return;
          let n: number;
          try {
            ({ bytesRead: n } = await handle.read(buf, 0, buf.length, null));
          } catch (err) {
            throw fsError(err, 'read', file);
          }
          if (n === 0) return;
          await stream.send({ bytes: Buffer.from(buf.subarray(0, n)) });
        }
      } finally {
        await handle.close();
      }
    }),
  };
}
