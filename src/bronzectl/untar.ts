// Extracting the .tar.gz that `bronzectl cp` receives into a local directory, as talosctl
// does: directories, regular files and symlinks; ownership and modes are not kept (files are
// created as the user's umask allows). Nothing is written outside the directory: an entry
// naming an absolute path or climbing out with "..", or one whose parent resolves outside
// (through a symlink from the archive), is refused with its name.
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { extract } from 'tar-stream';

export class UnsafeEntryError extends Error {}

function inside(root: string, p: string): boolean {
  return p === root || p.startsWith(root + path.sep);
}

/** Extracts a .tar.gz (as chunks) into `dir`, which exists. Returns the entries written. */
export async function extractTarGz(chunks: AsyncIterable<Uint8Array>, dir: string): Promise<number> {
  const root = fs.realpathSync(dir);
  const ex = extract();
  let count = 0;
  const consume = (async () => {
    for await (const entry of ex) {
      const h = entry.header;
      const rel = path.normalize(h.name).replace(/\/+$/, '');
      if (path.isAbsolute(h.name) || rel === '..' || rel.startsWith(`..${path.sep}`)) throw new UnsafeEntryError(`archive entry ${JSON.stringify(h.name)} points outside the target directory`);
      const target = path.join(root, rel === '.' ? '' : rel);
      const parent = path.dirname(target);
      if (target !== root) {
        fs.mkdirSync(parent, { recursive: true });
        if (!inside(root, fs.realpathSync(parent))) throw new UnsafeEntryError(`archive entry ${JSON.stringify(h.name)} resolves outside the target directory`);
      }
      if (h.type === 'directory') {
        fs.mkdirSync(target, { recursive: true });
        entry.resume();
      } else if (h.type === 'symlink') {
        fs.rmSync(target, { force: true });
        fs.symlinkSync(h.linkname ?? '', target);
        entry.resume();
      } else if (h.type === 'file' || h.type === 'contiguous-file') {
        const fd = fs.openSync(target, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o644);
        const out = fs.createWriteStream('', { fd });
        await pipeline(entry, out);
      } else {
        entry.resume(); // nothing else is archived by a node
        continue;
      }
      count++;
    }
  })();
  const gunzip = zlib.createGunzip();
  const feed = pipeline(
    chunks,
    gunzip,
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        if (ex.write(chunk)) cb();
        else ex.once('drain', () => cb());
      },
      final(cb) {
        ex.end(undefined);
        cb();
      },
    }),
  );
  try {
    await Promise.all([feed, consume]);
  } catch (err) {
    ex.destroy();
    throw err;
  }
  return count;
}
