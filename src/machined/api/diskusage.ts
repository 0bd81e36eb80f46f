// DiskUsage (`bronzectl usage`, talosctl's `du`): for each path, the size of every directory
// (and with `all`, every file), deepest entries first, as Talos computes it: a directory's
// size is its own st_size plus the sizes of everything below it (st_size, not blocks);
// symlinks count their own size and are not followed (a root that is a symlink is). The walk
// always covers the whole tree; recursion_depth only limits what is sent (0: everything;
// n: the path and n-1 levels below it), threshold drops entries smaller than it (positive) or
// larger than its absolute value (negative). An entry that cannot be read is sent with its
// error; /proc/kcore counts as 0. The walk is asynchronous and paced by the client.
import fs from 'node:fs';
import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { serverStream, type Stream } from './common.ts';
import { fsError } from './files.ts';

export interface DiskUsageRequest {
  recursion_depth?: number;
  all?: boolean;
  threshold?: number | string;
  paths?: string[];
}

export interface DiskUsageInfo {
  name: string;
  relative_name: string;
  size?: number;
  error?: string;
}

export interface DuOptions {
  depth: number;
  all: boolean;
  threshold: number;
  signal?: AbortSignal;
}

/** Talos's path normalisation: absolute, no trailing slash ("" is "/"). */
export function duPath(p: string): string {
  let out = p.startsWith('/') ? p : `/${p}`;
  out = out.replace(/\/+$/, '');
  return out === '' ? '/' : out;
}

function shown(o: DuOptions, depth: number, isDir: boolean, size: number): boolean {
  if (o.depth > 0 && depth >= o.depth) return false;
  if (!isDir && !o.all) return false;
  if (o.threshold > 0 && size < o.threshold) return false;
  if (o.threshold < 0 && size > -o.threshold) return false;
  return true;
}

/** The entries one path yields, deepest first. */
export async function* diskUsage(root: string, o: DuOptions): AsyncGenerator<DiskUsageInfo, void, undefined> {
  let top = root;
  let st: fs.Stats;
  try {
    st = await fs.promises.lstat(top);
    if (st.isSymbolicLink()) {
      top = await fs.promises.realpath(top);
      st = await fs.promises.lstat(top);
    }
  } catch (err) {
    yield { name: root, relative_name: root, error: fsError(err, 'lstat', root).message };
    return;
  }

  async function* visit(p: string, rel: string, depth: number, s: fs.Stats): AsyncGenerator<DiskUsageInfo, number, undefined> {
    let size = p === '/proc/kcore' ? 0 : Math.max(s.size, 0);
    const isDir = s.isDirectory();
    if (isDir) {
      let names: string[] = [];
      try {
        names = (await fs.promises.readdir(p)).sort();
      } catch (err) {
        yield { name: p, relative_name: rel, error: fsError(err, 'readdir', p).message };
      }
      for (const n of names) {
        if (o.signal?.aborted) return size;
        const child = path.join(p, n);
        const childRel = rel === '.' ? n : `${rel}/${n}`;
        let cs: fs.Stats;
        try {
          cs = await fs.promises.lstat(child);
        } catch (err) {
          yield { name: child, relative_name: childRel, error: fsError(err, 'lstat', child).message };
          continue;
        }
        size += yield* visit(child, childRel, depth + 1, cs);
      }
    }
    if (shown(o, depth, isDir, size)) yield { name: p, relative_name: rel, size };
    return size;
  }
  yield* visit(top, '.', 0, st);
}

export function diskUsageHandlers(): Record<string, grpc.handleServerStreamingCall<any, any>> {
  return {
    DiskUsage: serverStream<DiskUsageRequest, DiskUsageInfo>(async (req, stream: Stream<DiskUsageInfo>) => {
      const o: DuOptions = { depth: Number(req.recursion_depth ?? 0), all: !!req.all, threshold: Number(req.threshold ?? 0), signal: stream.signal };
      for (const p of req.paths ?? []) {
        for await (const info of diskUsage(duPath(p), o)) {
          if (stream.closed) return;
          await stream.send(info);
        }
      }
    }),
  };
}
