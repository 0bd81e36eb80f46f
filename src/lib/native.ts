// koffi, the FFI used for every syscall Node does not offer (mount, reboot, waitpid, ...).
// Inside the single-executable binary, koffi's native module travels as the SEA asset
// `koffi.node`: it is written to a tmpfs file (mmap needs a file) and loaded with
// process.dlopen. Everywhere else (tests, host runs) the npm package loads it.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import type * as KoffiModule from 'koffi';
import { releaseSeaBlob } from './sea-blob.ts';

export type Koffi = typeof KoffiModule;

let loaded: Koffi | undefined;

interface SeaApi {
  isSea(): boolean;
  getRawAsset(key: string): ArrayBuffer;
}

/** The asset image-builder/sea.sh puts beside `koffi.node`: the first 16 hex digits of its SHA-256. */
export const KOFFI_DIGEST_ASSET = 'koffi.node.sha256';

/**
 * The module's file name part: the digest sea.sh recorded at build time (hashing the asset took
 * machined and networkd 70-80 ms each under QEMU/TCG, on their way to the API), or, in a
 * binary without that asset, the digest made here.
 */
function koffiDigest(sea: SeaApi): string {
  try {
    const recorded = Buffer.from(sea.getRawAsset(KOFFI_DIGEST_ASSET)).toString('latin1').trim();
    if (/^[0-9a-f]{16}$/.test(recorded)) return recorded;
  } catch {
    // not in this binary
  }
  return crypto.createHash('sha256').update(Buffer.from(sea.getRawAsset('koffi.node'))).digest('hex').slice(0, 16);
}

function seaApi(): SeaApi | undefined {
  try {
    return process.getBuiltinModule?.('node:sea') as SeaApi | undefined;
  } catch {
    return undefined;
  }
}

/** Directory for the extracted native module: /run is the tmpfs preinit hands over. */
function extractDir(): string {
  return process.env.BRONZE_NATIVE_DIR ?? '/run/bronze';
}

/** Set by the first process that extracts the module (machined), inherited by the daemons. */
const EXTRACTED_ENV = 'BRONZE_KOFFI_PATH';

function loadFromSea(sea: SeaApi): Koffi {
  let file = process.env[EXTRACTED_ENV];
  if (!file || !fs.existsSync(file)) {
    const dir = extractDir();
    file = path.join(dir, `koffi-${koffiDigest(sea)}.node`);
    if (!fs.existsSync(file)) {
      const bytes = Buffer.from(sea.getRawAsset('koffi.node'));
      fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, bytes, { mode: 0o555 });
      // Several processes may race here (machined and the daemons it starts before it has
      // loaded). A link, unlike a rename, never replaces the file another process has already
      // put there and may have mapped: every process maps the same file, whose pages they then
      // share (a replaced one stays mapped, deleted, with pages of its own: 0.5 MiB more PSS).
      try {
        fs.linkSync(tmp, file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      } finally {
        fs.rmSync(tmp, { force: true });
      }
    }
    // Children (machined's daemons) load this file instead of hashing the asset again: under
    // QEMU/TCG that hash alone is a noticeable part of a daemon's start.
    process.env[EXTRACTED_ENV] = file;
  }
  const mod = { exports: {} as Koffi };
  process.dlopen(mod, file);
  return mod.exports;
}

/** Loads koffi once; call before koffi(). */
export async function initNative(): Promise<Koffi> {
  if (loaded) return loaded;
  const sea = seaApi();
  if (sea?.isSea()) {
    loaded = loadFromSea(sea);
    // The role's bundle and code cache were read before its code ran (src/main.ts), and koffi's
    // module just now: nothing else of the blob is read, so its pages go back (lib/sea-blob.ts).
    try {
      releaseSeaBlob(loaded);
    } catch (err) {
      process.stderr.write(`bronze: keeping the SEA blob's pages: ${(err as Error).message}\n`);
    }
  } else {
    const m = (await import('koffi')) as unknown as { default: Koffi };
    loaded = m.default;
  }
  return loaded;
}

export function koffi(): Koffi {
  if (!loaded) throw new Error('koffi used before initNative()');
  return loaded;
}
