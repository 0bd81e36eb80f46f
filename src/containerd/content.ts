// containerd's content store through its Content service: what is there, reading a blob back,
// labels, and writing a blob through the Write stream with its digest checked while it streams.
import { createHash, type Hash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { type CallOptions, type ContainerdClient, hasGrpcCode, isAlreadyExists, isNotFound } from './client.ts';

const CONTENT = 'containerd.services.content.v1.Content';
/** The size of one Write message: far under containerd's 16 MiB receive limit. */
export const WRITE_CHUNK = 1024 * 1024;

export interface ContentInfo {
  digest: string;
  size: number;
  labels: Record<string, string>;
}

export interface BlobRef {
  digest: string;
  size: number;
}

/** A blob's digest did not match what it was named (both named). */
export class DigestMismatchError extends Error {
  constructor(
    readonly expected: string,
    readonly actual: string,
    what = 'blob',
  ) {
    super(`digest mismatch for ${what} ${expected}: expected ${expected}, got ${actual}`);
    this.name = 'DigestMismatchError';
  }
}

/** A blob longer or shorter than its descriptor says. */
export class BlobSizeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BlobSizeError';
  }
}

/** A running sha256/sha512 over a blob, named as the digest names its algorithm. */
export function digester(digest: string): { hash: Hash; digest(): string } {
  const algo = digest.slice(0, digest.indexOf(':'));
  if (algo !== 'sha256' && algo !== 'sha512') throw new Error(`unsupported digest algorithm in ${digest}`);
  const hash = createHash(algo);
  return { hash, digest: () => `${algo}:${hash.digest('hex')}` };
}

export function sha256(data: Uint8Array): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** The content's info, or undefined when the store does not have it. */
export async function contentInfo(c: ContainerdClient, ns: string, digest: string, opts?: CallOptions): Promise<ContentInfo | undefined> {
  try {
    const r = await c.unary<{ info: { digest: string; size: string; labels: Record<string, string> } }>(CONTENT, 'Info', { digest }, ns, opts);
    return { digest: r.info.digest, size: Number(r.info.size), labels: r.info.labels ?? {} };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** A whole blob out of the store (manifests, configs: small). */
export async function readContent(c: ContainerdClient, ns: string, digest: string, opts?: CallOptions): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const r of c.serverStream<{ offset: string; data: Buffer }>(CONTENT, 'Read', { digest, offset: 0, size: 0 }, ns, opts)) parts.push(r.data);
  return Buffer.concat(parts);
}

/** Sets (or, with an empty value, removes) labels on a blob, leaving its other labels alone. */
export async function setContentLabels(c: ContainerdClient, ns: string, digest: string, labels: Record<string, string>, opts?: CallOptions): Promise<void> {
  await c.unary(CONTENT, 'Update', { info: { digest, labels }, update_mask: { paths: Object.keys(labels).map((k) => `labels.${k}`) } }, ns, opts);
}

/** Drops an unfinished ingest (`ref`); one that is not there is fine. */
export async function abortIngest(c: ContainerdClient, ns: string, ref: string, opts?: CallOptions): Promise<void> {
  try {
    await c.unary(CONTENT, 'Abort', { ref }, ns, opts);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

interface WriteResponse {
  action: string;
  offset: string;
  total: string;
  digest: string;
}

/**
 * An open ingest in the content store: data is written at the current offset, hashed as it
 * goes; commit checks the digest here first (so a mismatch names both digests and the ingest is
 * dropped), and containerd checks it again.
 */
export interface Ingest {
  /** Bytes written so far. */
  readonly offset: number;
  write(data: Uint8Array): Promise<void>;
  /** Verifies and commits; throws DigestMismatchError (after aborting the ingest) on a bad blob. */
  commit(labels?: Record<string, string>): Promise<void>;
  /** Drops what was written. */
  abort(): Promise<void>;
}

/**
 * Opens an ingest for `blob` under `ref` (containerd's remotes key: `layer-sha256:…`), or
 * undefined when the store has the blob already. Data left by an earlier, interrupted ingest of
 * the same ref is discarded: this process has no hash of it, and a blob is only committed after
 * its digest is checked here.
 */
export async function openIngest(c: ContainerdClient, ns: string, ref: string, blob: BlobRef, opts?: CallOptions): Promise<Ingest | undefined> {
  const call = await c.bidi<object, WriteResponse>(CONTENT, 'Write', ns, opts);
  const next = async (): Promise<WriteResponse> => {
    const r = await call.responses.next();
    if (r.done) throw new Error(`content write ${ref}: stream closed early`);
    return r.value;
  };
  call.write({ action: 'STAT', ref, total: blob.size, expected: blob.digest });
  try {
    await next();
  } catch (err) {
    call.cancel();
    if (isAlreadyExists(err)) return undefined;
    throw err;
  }
  const d = digester(blob.digest);
  let offset = 0;
  let closed: Promise<void> | undefined;
  /** Ends the session and waits for containerd to close it (and so to release the ingest). */
  const finish = (): Promise<void> =>
    (closed ??= (async () => {
      call.end();
      try {
        while (!(await call.responses.next()).done);
      } catch {
        // The session's end status: nothing more to learn here.
      }
    })());
  const ingest: Ingest = {
    get offset() {
      return offset;
    },
    async write(data) {
      for (let i = 0; i < data.length; i += WRITE_CHUNK) {
        const chunk = data.subarray(i, Math.min(data.length, i + WRITE_CHUNK));
        if (offset + chunk.length > blob.size) {
          await ingest.abort();
          throw new BlobSizeError(`blob ${blob.digest} is longer than its ${blob.size} bytes`);
        }
        d.hash.update(chunk);
        // offset 0 on the first write truncates what an earlier ingest of this ref left.
        call.write({ action: 'WRITE', offset, data: chunk });
        const r = await next();
        offset += chunk.length;
        if (Number(r.offset) !== offset) throw new Error(`content write ${ref}: store at offset ${r.offset}, expected ${offset}`);
      }
    },
    async commit(labels = {}) {
      if (offset !== blob.size) {
        await ingest.abort();
        throw new BlobSizeError(`blob ${blob.digest}: got ${offset} of ${blob.size} bytes`);
      }
      const actual = d.digest();
      if (actual !== blob.digest) {
        await ingest.abort().catch(() => {});
        throw new DigestMismatchError(blob.digest, actual);
      }
      call.write({ action: 'COMMIT', offset, total: blob.size, expected: blob.digest, labels });
      try {
        await next();
      } catch (err) {
        // Another writer committed the same blob meanwhile.
        if (!isAlreadyExists(err)) throw err;
      } finally {
        await finish();
      }
    },
    async abort() {
      await finish();
      await abortIngest(c, ns, ref, opts);
    },
  };
  return ingest;
}

/**
 * Stores a stream whose digest is not known in advance (a docker-save layer, named by path):
 * hashed while it streams, committed under the digest it turns out to have. Resolves with the
 * digest and size, and whether the first bytes were gzip's magic.
 */
export async function writeUnknown(c: ContainerdClient, ns: string, ref: string, data: AsyncIterable<Uint8Array>, opts?: CallOptions): Promise<BlobRef & { gzip: boolean }> {
  const call = await c.bidi<object, WriteResponse>(CONTENT, 'Write', ns, opts);
  const next = async (): Promise<WriteResponse> => {
    const r = await call.responses.next();
    if (r.done) throw new Error(`content write ${ref}: stream closed early`);
    return r.value;
  };
  const hash = createHash('sha256');
  let offset = 0;
  /** The first two bytes, however the stream splits them. */
  const head: number[] = [];
  try {
    call.write({ action: 'STAT', ref });
    await next();
    for await (const chunk of data) {
      for (let i = 0; head.length < 2 && i < chunk.length; i++) head.push(chunk[i]!);
      for (let i = 0; i < chunk.length; i += WRITE_CHUNK) {
        const part = chunk.subarray(i, Math.min(chunk.length, i + WRITE_CHUNK));
        hash.update(part);
        call.write({ action: 'WRITE', offset, data: part });
        await next();
        offset += part.length;
      }
    }
    const digest = `sha256:${hash.digest('hex')}`;
    call.write({ action: 'COMMIT', offset, total: offset, expected: digest });
    try {
      await next();
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    return { digest, size: offset, gzip: head[0] === 0x1f && head[1] === 0x8b };
  } catch (err) {
    call.cancel();
    await abortIngest(c, ns, ref, opts).catch(() => {});
    throw err;
  } finally {
    call.end();
  }
}

/** Whether an error is containerd's "ref locked" (another writer holds the same ingest). */
export function isRefLocked(err: unknown): boolean {
  return hasGrpcCode(err, grpc.status.UNAVAILABLE) && /locked/.test(String((err as Error).message));
}

/** Writes a blob held in memory (a manifest, a config); a present blob is left as it is. */
export async function writeContent(c: ContainerdClient, ns: string, ref: string, data: Uint8Array, blob: BlobRef, labels: Record<string, string> = {}, opts?: CallOptions): Promise<void> {
  const ingest = await openIngest(c, ns, ref, blob, opts);
  if (!ingest) {
    if (Object.keys(labels).length) await setContentLabels(c, ns, blob.digest, labels, opts);
    return;
  }
  await ingest.write(data);
  await ingest.commit(labels);
}

/** containerd's remotes.MakeRefKey: the ingest ref of a blob by what it is. */
export function ingestRef(kind: 'manifest' | 'index' | 'config' | 'layer' | 'unknown', digest: string): string {
  return `${kind}-${digest}`;
}
