// The node's side of a signed upgrade image (built by image-builder/upgrade.sh): a ustar
// archive whose entries are, in this order,
//
//   manifest.json   {"format":"bronze-upgrade/1","version":"v0.2.0","arch":"amd64",
//                    "roothash":"<hex>",
//                    "files":{"vmlinuz":{"size":N,"sha256":"<hex>"},"initramfs.xz":{...},
//                             "bronze.efi":{...}}}
//   manifest.sig    the raw 64-byte Ed25519 signature over the exact bytes of manifest.json
//   vmlinuz, initramfs.xz, and bronze.efi where the architecture has one
//
// roothash is the dm-verity root hash of the rootfs inside initramfs.xz (the slot boots with
// bronze.roothash=<it>); bronze.efi is the signed unified kernel image (the same kernel and
// initramfs, and the command line with that root hash) that UEFI boots through systemd-boot.
//
// verifyUpgradeImage reads it as a stream, so an image is never held in memory: it checks the
// signature against the key the node trusts before it accepts any file, validates the
// manifest, then writes each file to the stage directory while hashing it and checks its size
// and SHA-256. Anything wrong (not a tar, unsigned, bad signature, wrong architecture, a file
// unknown, repeated, missing, short or altered) throws UpgradeImageError naming it, after
// removing whatever was staged. Bytes after the last file are read but not trusted: another
// entry there is rejected, anything that is not a tar entry (padding, garbage) is ignored.
import { KeyObject, createHash, createPublicKey, verify } from 'node:crypto';
import { mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { extract as tarExtract, type Extract } from 'tar-stream';
import { z } from '../lib/zod.ts';

export const UPGRADE_FORMAT = 'bronze-upgrade/1';
/** The files an upgrade image may carry, in the order upgrade.sh writes them. */
export const UPGRADE_FILES = ['vmlinuz', 'initramfs.xz', 'bronze.efi'] as const;
export type UpgradeFileName = (typeof UPGRADE_FILES)[number];
/** The files every image carries (bronze.efi only where UEFI boots a UKI). */
export const REQUIRED_UPGRADE_FILES = ['vmlinuz', 'initramfs.xz'] as const;
type RequiredFileName = (typeof REQUIRED_UPGRADE_FILES)[number];

export interface UpgradeFile {
  size: number;
  /** Lower-case hex SHA-256 of the file's bytes. */
  sha256: string;
}

export interface UpgradeManifest {
  format: typeof UPGRADE_FORMAT;
  version: string;
  arch: string;
  /** The dm-verity root hash of the rootfs in initramfs.xz (64 hex digits). */
  roothash: string;
  files: Record<RequiredFileName, UpgradeFile> & Partial<Record<UpgradeFileName, UpgradeFile>>;
}

export interface VerifiedUpgradeImage {
  manifest: UpgradeManifest;
  /** Paths of the verified files in the stage directory. */
  files: Record<RequiredFileName, string> & Partial<Record<UpgradeFileName, string>>;
}

export interface VerifyUpgradeImageOptions {
  /** The Ed25519 public key (PEM, SPKI) the node trusts to sign upgrades. */
  trustedKeyPem: string | Buffer;
  /** Where the files are written (made if missing): `<stageDir>/vmlinuz`, `<stageDir>/initramfs.xz`. */
  stageDir: string;
  /** The architecture the image must be for: amd64, arm64. Default: this machine's. */
  arch?: string;
  /** The most bytes read from the source before giving up. Default: no limit. */
  maxBytes?: number;
  /** Called with the bytes read so far, after each chunk. */
  onProgress?: (bytesRead: number) => void;
}

export type UpgradeImageErrorReason =
  | 'bad-key'
  | 'not-an-image'
  | 'bad-signature'
  | 'bad-manifest'
  | 'wrong-arch'
  | 'unexpected-entry'
  | 'missing-file'
  | 'size-mismatch'
  | 'hash-mismatch'
  | 'truncated'
  | 'too-large'
  | 'read-failed'
  | 'stage-failed';

export class UpgradeImageError extends Error {
  override name = 'UpgradeImageError';
  constructor(
    readonly reason: UpgradeImageErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Bronze's name for a Node `process.arch`: x64 → amd64, arm64 → arm64. */
export function bronzeArch(nodeArch: string = process.arch): string {
  return nodeArch === 'x64' ? 'amd64' : nodeArch;
}

/** The trusted key as a KeyObject; UpgradeImageError('bad-key') unless it is an Ed25519 public key. */
export function trustedUpgradeKey(pem: string | Buffer): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (err) {
    throw new UpgradeImageError('bad-key', `the trusted upgrade key is not a public key: ${message(err)}`, { cause: err });
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new UpgradeImageError('bad-key', `the trusted upgrade key is ${key.asymmetricKeyType ?? 'unknown'}, not Ed25519`);
  }
  return key;
}

/** Checks manifest.sig over manifest.json; UpgradeImageError('bad-signature') if it does not verify. */
export function verifyManifestSignature(manifestBytes: Uint8Array, signature: Uint8Array, trustedKey: KeyObject | string | Buffer): void {
  const key = trustedKey instanceof KeyObject ? trustedKey : trustedUpgradeKey(trustedKey);
  if (signature.byteLength !== SIGNATURE_SIZE) {
    throw new UpgradeImageError('bad-signature', `bad signature: manifest.sig is ${signature.byteLength} bytes, an Ed25519 signature is ${SIGNATURE_SIZE}`);
  }
  if (!verify(null, manifestBytes, key, signature)) {
    throw new UpgradeImageError(
      'bad-signature',
      'bad signature: manifest.json is not signed by the trusted key (it was altered, or signed by another key)',
    );
  }
}

/** The manifest's schema, built when a manifest is first read (zod's schemas cost a process that only loads this module). */
let manifestSchemaBuilt: ReturnType<typeof buildManifestSchema> | undefined;
function buildManifestSchema() {
  const fileSchema = z.strictObject({
    size: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex digits'),
  });
  const manifestSchema = z.strictObject({
    format: z.literal(UPGRADE_FORMAT),
    version: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/, 'expected a version such as v1.2.3'),
    arch: z.string().regex(/^[a-z0-9_]{1,16}$/, 'expected an architecture name such as amd64'),
    roothash: z.string().regex(/^[0-9a-f]{64}$/, 'expected a dm-verity root hash (64 lower-case hex digits)'),
    files: z.strictObject({ vmlinuz: fileSchema, 'initramfs.xz': fileSchema, 'bronze.efi': fileSchema.optional() }),
  });
  return manifestSchema;
}

/**
 * Parses and validates manifest.json (which must already have passed verifyManifestSignature):
 * the format, the fields, only the known files, and, with `arch`, that the image is for it.
 */
export function parseUpgradeManifest(bytes: Uint8Array, opts: { arch?: string } = {}): UpgradeManifest {
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (err) {
    throw new UpgradeImageError('bad-manifest', `bad manifest: manifest.json is not JSON: ${message(err)}`, { cause: err });
  }
  const format = (data as { format?: unknown } | null)?.format;
  if (format !== UPGRADE_FORMAT) {
    throw new UpgradeImageError('bad-manifest', `bad manifest: format ${JSON.stringify(format)} is not ${JSON.stringify(UPGRADE_FORMAT)}`);
  }
  const r = (manifestSchemaBuilt ??= buildManifestSchema()).safeParse(data);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(top)'}: ${i.message}`);
    throw new UpgradeImageError('bad-manifest', `bad manifest: ${issues.join('; ')}`);
  }
  const manifest: UpgradeManifest = r.data;
  if (opts.arch !== undefined && manifest.arch !== opts.arch) {
    throw new UpgradeImageError('wrong-arch', `wrong architecture: the image is for ${manifest.arch}, this node is ${opts.arch}`);
  }
  return manifest;
}

/**
 * Reads, verifies and stages an upgrade image from a stream (an HTTP body, a file, a gRPC
 * upload): see the top of this file. Resolves once every file is staged and checked.
 */
export async function verifyUpgradeImage(
  source: AsyncIterable<Buffer | Uint8Array> | Readable,
  opts: VerifyUpgradeImageOptions,
): Promise<VerifiedUpgradeImage> {
  const key = trustedUpgradeKey(opts.trustedKeyPem);
  const arch = opts.arch ?? bronzeArch();
  try {
    await mkdir(opts.stageDir, { recursive: true });
  } catch (err) {
    throw new UpgradeImageError('stage-failed', `cannot make the stage directory ${opts.stageDir}: ${message(err)}`, { cause: err });
  }

  const tar = tarExtract();
  const feed = feedTar(source, tar, opts);
  const staged: string[] = [];
  // For messages: the entry whose data is being read, and the last one read whole.
  let reading = '';
  let last: string | undefined;
  let complete = false;
  try {
    const entries = tar[Symbol.asyncIterator]();
    const next = async (): Promise<TarEntry | undefined> => {
      try {
        const r = await entries.next();
        return r.done ? undefined : r.value;
      } catch (err) {
        // Past the last file, what follows is not ours to judge (padding, trailing garbage).
        if (complete && !feed.failure()) return undefined;
        throw inputError(err, feed.failure(), last === undefined ? { at: 'start' } : { after: last });
      }
    };

    const manifestEntry = await next();
    if (!manifestEntry) throw notAnImage('it is empty');
    if (manifestEntry.header.name !== 'manifest.json') {
      throw notAnImage(`its first entry is ${q(manifestEntry.header.name)}, not manifest.json`);
    }
    const fail = (err: unknown) => inputError(err, feed.failure(), { inside: reading });
    reading = 'manifest.json';
    const manifestBytes = await readSmallEntry(manifestEntry, MAX_MANIFEST_SIZE, reading, fail);
    last = reading;

    const sigEntry = await next();
    if (!sigEntry) throw notAnImage('it ends after manifest.json: it is unsigned (no manifest.sig)');
    if (sigEntry.header.name !== 'manifest.sig') {
      throw notAnImage(`manifest.sig must follow manifest.json, found ${q(sigEntry.header.name)}: it is unsigned`);
    }
    reading = 'manifest.sig';
    const signature = await readSmallEntry(sigEntry, SIGNATURE_SIZE, reading, fail);
    last = reading;

    verifyManifestSignature(manifestBytes, signature, key);
    const manifest = parseUpgradeManifest(manifestBytes, { arch });
    const listed = UPGRADE_FILES.filter((f) => manifest.files[f] !== undefined);
    const total = listed.reduce((sum, f) => sum + manifest.files[f]!.size, 0);
    if (opts.maxBytes !== undefined && total > opts.maxBytes) {
      throw new UpgradeImageError('too-large', `too large: the image's files are ${total} bytes, more than the limit of ${opts.maxBytes}`);
    }

    const files: Partial<Record<UpgradeFileName, string>> = {};
    for (;;) {
      const entry = await next();
      if (!entry) break;
      const name = entry.header.name;
      if (!isUpgradeFile(name)) throw new UpgradeImageError('unexpected-entry', `unexpected entry ${q(name)} in the image`);
      if (files[name] !== undefined) throw new UpgradeImageError('unexpected-entry', `duplicate entry ${q(name)} in the image`);
      checkIsFile(entry);
      const expected = manifest.files[name];
      if (!expected) throw new UpgradeImageError('unexpected-entry', `unexpected entry ${q(name)}: the manifest does not list it`);
      if (entry.header.size !== expected.size) {
        throw new UpgradeImageError('size-mismatch', `size mismatch for ${name}: ${entry.header.size} bytes, the manifest says ${expected.size}`);
      }
      reading = name;
      const path = join(opts.stageDir, name);
      staged.push(path);
      await stageEntry(entry, path, expected, name, fail);
      files[name] = path;
      complete = listed.every((f) => files[f] !== undefined);
      last = name;
    }
    const missing = listed.filter((f) => files[f] === undefined);
    if (missing.length) {
      throw new UpgradeImageError('missing-file', `missing ${missing.join(', ')}: the image ends before ${missing.length > 1 ? 'them' : 'it'} (truncated?)`);
    }
    // The source is read to its end, or to what follows the archive: no more is needed.
    feed.stop();
    return { manifest, files: files as VerifiedUpgradeImage['files'] };
  } catch (err) {
    tar.destroy();
    feed.abort();
    await Promise.all(staged.map((p) => rm(p, { force: true }).catch(() => undefined)));
    if (err instanceof UpgradeImageError) throw err;
    throw new UpgradeImageError('stage-failed', `staging the upgrade failed: ${message(err)}`, { cause: err });
  }
}

// ---------------------------------------------------------------------------------------------

const SIGNATURE_SIZE = 64;
const MAX_MANIFEST_SIZE = 64 * 1024;

type TarEntry = Extract extends AsyncIterable<infer T> ? T : never;

const q = (s: string) => JSON.stringify(s);
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
const notAnImage = (why: string) => new UpgradeImageError('not-an-image', `not a Bronze upgrade image: ${why}`);

function isUpgradeFile(name: string): name is UpgradeFileName {
  return (UPGRADE_FILES as readonly string[]).includes(name);
}

function checkIsFile(entry: TarEntry): void {
  if (entry.header.type !== 'file') {
    throw new UpgradeImageError('unexpected-entry', `unexpected entry ${q(entry.header.name)}: a ${entry.header.type}, not a regular file`);
  }
}

/** The whole of a manifest entry, refused before reading when larger than `max`. */
async function readSmallEntry(entry: TarEntry, max: number, name: string, fail: InputFailure): Promise<Buffer> {
  checkIsFile(entry);
  if (entry.header.size > max) {
    throw notAnImage(`${name} is ${entry.header.size} bytes, at most ${max} expected`);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of chunksOf(entry, fail)) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** Writes one file to `path` while hashing it, then checks the size and the hash and syncs it. */
async function stageEntry(entry: TarEntry, path: string, expected: UpgradeFile, name: string, fail: InputFailure): Promise<void> {
  const hash = createHash('sha256');
  let size = 0;
  const fh = await open(path, 'w', 0o644);
  try {
    for await (const chunk of chunksOf(entry, fail)) {
      hash.update(chunk);
      size += chunk.byteLength;
      await fh.write(chunk);
    }
    if (size !== expected.size) {
      throw new UpgradeImageError('truncated', `truncated: ${name} ends after ${size} of ${expected.size} bytes`);
    }
    const sha256 = hash.digest('hex');
    if (sha256 !== expected.sha256) {
      throw new UpgradeImageError('hash-mismatch', `hash mismatch for ${name}: sha256 ${sha256}, the manifest says ${expected.sha256}`);
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
}

type InputFailure = (err: unknown) => UpgradeImageError;

/** An entry's bytes; a failure to read them (the input ended, broke, was too large) goes through `fail`. */
async function* chunksOf(entry: TarEntry, fail: InputFailure): AsyncGenerator<Uint8Array> {
  const it = entry[Symbol.asyncIterator]();
  for (;;) {
    let r: IteratorResult<unknown>;
    try {
      r = await it.next();
    } catch (err) {
      throw fail(err);
    }
    if (r.done) return;
    yield r.value as Uint8Array;
  }
}

/**
 * What made the tar reader fail, told as what is wrong with the image: a failure of the source
 * itself; at the start, no tar; inside an entry's data (where the reader fails only when the
 * input ends), a truncation; between entries, a truncated or corrupt header.
 */
function inputError(
  err: unknown,
  sourceFailure: UpgradeImageError | undefined,
  where: { at: 'start' } | { inside: string } | { after: string },
): UpgradeImageError {
  if (sourceFailure) return sourceFailure;
  if (err instanceof UpgradeImageError) return err;
  const msg = message(err);
  if ('inside' in where) return new UpgradeImageError('truncated', `truncated: the image ends inside ${where.inside}`, { cause: err });
  if ('at' in where) return new UpgradeImageError('not-an-image', `not a Bronze upgrade image: not a tar archive (${msg})`, { cause: err });
  if (/unexpected end/i.test(msg)) {
    return new UpgradeImageError('truncated', `truncated: the image ends inside the header of the entry after ${where.after}`, { cause: err });
  }
  return new UpgradeImageError('not-an-image', `corrupt upgrade image: the entry after ${where.after} is not a tar entry (${msg})`, { cause: err });
}

interface Feed {
  /** Settles when the source is read to its end (or the reading stopped). */
  done: Promise<void>;
  /** Why reading the source failed, if it did (read error, too large). */
  failure(): UpgradeImageError | undefined;
  /** Stops reading at the next chunk. */
  stop(): void;
  /** Stops reading and destroys the source when it can be (a download is cancelled). */
  abort(): void;
}

/** Copies the source into the tar reader, with backpressure, the byte limit and progress. */
function feedTar(
  source: AsyncIterable<Buffer | Uint8Array> | Readable,
  tar: Extract,
  opts: Pick<VerifyUpgradeImageOptions, 'maxBytes' | 'onProgress'>,
): Feed {
  let failure: UpgradeImageError | undefined;
  let aborted = false;
  const done = (async () => {
    let bytes = 0;
    try {
      for await (const chunk of source as AsyncIterable<unknown>) {
        if (aborted || tar.destroyed) break;
        if (!(chunk instanceof Uint8Array)) throw new UpgradeImageError('read-failed', 'reading the image failed: the source gives strings, not bytes');
        bytes += chunk.byteLength;
        if (opts.maxBytes !== undefined && bytes > opts.maxBytes) {
          throw new UpgradeImageError('too-large', `too large: the image is over the limit of ${opts.maxBytes} bytes`);
        }
        opts.onProgress?.(bytes);
        if (!tar.write(chunk)) await drained(tar);
      }
      if (!aborted && !tar.destroyed) tar.end(undefined);
    } catch (err) {
      failure =
        err instanceof UpgradeImageError ? err : new UpgradeImageError('read-failed', `reading the image failed: ${message(err)}`, { cause: err });
      tar.destroy(failure);
    }
  })();
  return {
    done,
    failure: () => failure,
    stop: () => {
      aborted = true;
    },
    abort: () => {
      aborted = true;
      const s = source as { destroy?: unknown };
      if (typeof s.destroy === 'function') (source as Readable).destroy();
    },
  };
}

function drained(tar: Extract): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      tar.off('drain', done);
      tar.off('close', done);
      resolve();
    };
    tar.on('drain', done);
    tar.on('close', done);
  });
}
