// Image pull, the work containerd 1.6 leaves to its client: resolve the reference at the
// registry (mirrors first), pick this node's manifest from an index, stream every blob into the
// content store with its digest checked (resuming with Range when the registry stalls or drops
// the connection), unpack the layers into the snapshotter, and only then create the image
// record, so that an image either is whole or does not exist. Content already in the store is
// not fetched again, and an image already complete is not looked up at all unless asked.
import { setTimeout as sleep } from 'node:timers/promises';
import { requireImageReference, formatImageReference } from '../config/image-ref.ts';
import { Limiter } from '../lib/limit.ts';
import { type CallOptions, type ContainerdClient, isNotFound, timestampToDate } from './client.ts';
import { BlobSizeError, type Ingest, contentInfo, ingestRef, isRefLocked, openIngest, readContent, writeContent } from './content.ts';
import { imageComplete, imageSize, putImage, withLease } from './images.ts';
import { type Descriptor, type ImageConfig, type ImageIndex, type ImageManifest, childGcLabels, isConfig, isIndex, isManifest } from './media-types.ts';
import { chooseManifest, nodePlatform } from './platform.ts';
import { RegistryClient, RegistryError } from './registry.ts';
import type { ImageInfo, PullProgress, RegistryConfig } from './types.ts';
import { DEFAULT_SNAPSHOTTER, unpack } from './unpack.ts';

export interface PullOptions {
  registries?: RegistryConfig;
  onProgress?: (p: PullProgress) => void;
  /**
   * `always` (the API's Pull, as `docker pull`): resolve the tag at the registry, fetch only
   * what is missing. `ifNotPresent` (a container's start): a complete image in the store is
   * used as it is, without the registry.
   */
  policy?: 'always' | 'ifNotPresent';
  /** Registry stall timeout (ms) before a blob fetch is retried from where it was. */
  stallTimeoutMs?: number;
}

/** What a pull tells its caller: the stored image and how many bytes it fetched. */
export interface PullResult extends ImageInfo {
  /** Bytes of blobs fetched from the registry by this pull (0: everything was already there). */
  fetchedBytes: number;
}

/** Attempts per blob that make no progress before the pull fails. */
const RETRIES = 5;
/** Blobs fetched at once. */
const CONCURRENCY = 3;

function kindOf(desc: Descriptor): 'manifest' | 'index' | 'config' | 'layer' {
  if (isIndex(desc.mediaType)) return 'index';
  if (isManifest(desc.mediaType)) return 'manifest';
  if (isConfig(desc.mediaType)) return 'config';
  return 'layer';
}

interface PullContext {
  c: ContainerdClient;
  ns: string;
  call: CallOptions;
  registry: RegistryClient;
  opts: PullOptions;
  fetched: number;
}

/**
 * Fetches one blob into the content store unless it is there (the ingest's STAT says so).
 * Retries a fetch that fails (stall, dropped connection, 5xx) from the offset reached, RETRIES
 * times in a row without progress; a digest mismatch or an auth refusal is not retried.
 */
async function fetchBlob(p: PullContext, desc: Descriptor): Promise<void> {
  const report = (offset: number, done: boolean) => p.opts.onProgress?.({ digest: desc.digest, offset, total: desc.size, done });
  const ref = ingestRef(kindOf(desc), desc.digest);
  let ingest: Ingest | undefined;
  for (let locked = 0; ; locked++) {
    try {
      ingest = await openIngest(p.c, p.ns, ref, desc, p.call);
      break;
    } catch (err) {
      // Another pull is writing the same blob: wait for it, then take what it stored.
      if (!isRefLocked(err) || locked > 600) throw err;
      await sleep(100);
      if (await contentInfo(p.c, p.ns, desc.digest, p.call)) break;
    }
  }
  if (!ingest) {
    report(desc.size, true);
    return;
  }
  let failures = 0;
  report(0, false);
  for (;;) {
    const before = ingest.offset;
    try {
      if (ingest.offset < desc.size) {
        const body = await p.registry.blob(desc, ingest.offset);
        // Batches the registry's small reads into Write messages of up to 1 MiB.
        let batch: Buffer[] = [];
        let batched = 0;
        const flush = async () => {
          if (batched === 0) return;
          const data = batch.length === 1 ? batch[0]! : Buffer.concat(batch, batched);
          batch = [];
          batched = 0;
          await ingest.write(data);
          p.fetched += data.length;
          report(ingest.offset, false);
        };
        try {
          for await (const chunk of body) {
            batch.push(chunk as Buffer);
            batched += (chunk as Buffer).length;
            if (batched >= 1024 * 1024) await flush();
          }
        } finally {
          // What arrived before a drop is good: the next attempt resumes after it.
          await flush();
        }
      }
      if (ingest.offset < desc.size) throw new RegistryError('unreachable', `blob ${desc.digest} ended at ${ingest.offset} of ${desc.size} bytes`);
      break;
    } catch (err) {
      const fatal = err instanceof RegistryError && (err.kind === 'auth' || err.kind === 'not-found' || err.kind === 'digest');
      failures = ingest.offset > before ? 1 : failures + 1;
      if (fatal || failures > RETRIES || err instanceof BlobSizeError) {
        await ingest.abort().catch(() => {});
        throw err;
      }
      await sleep(Math.min(200 * 2 ** (failures - 1), 5000));
    }
  }
  await ingest.commit();
  report(desc.size, true);
}

/** A manifest or index's bytes: from the store if it has them, else from the registry (then stored with its GC labels). */
async function manifestBytes(p: PullContext, desc: Descriptor): Promise<Buffer> {
  try {
    return await readContent(p.c, p.ns, desc.digest, p.call);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  return (await p.registry.manifest(desc.digest)).body;
}

/** Stores a platform manifest's blobs and the manifest itself (bottom-up: a stored parent always has its children). */
async function storeManifest(p: PullContext, desc: Descriptor, body: Buffer): Promise<{ manifest: ImageManifest; config: ImageConfig }> {
  const manifest = JSON.parse(body.toString('utf8')) as ImageManifest;
  if (!manifest.config || !Array.isArray(manifest.layers)) throw new RegistryError('protocol', `manifest ${desc.digest} has no config or layers`);
  const blobs = [manifest.config, ...manifest.layers];
  const limiter = new Limiter(CONCURRENCY);
  await Promise.all(blobs.map((b) => limiter.run(() => fetchBlob(p, b))));
  await writeContent(p.c, p.ns, ingestRef('manifest', desc.digest), body, desc, childGcLabels(blobs), p.call);
  const config = JSON.parse((await readContent(p.c, p.ns, manifest.config.digest, p.call)).toString('utf8')) as ImageConfig;
  return { manifest, config };
}

/** Pulls `ref` into the namespace; see PullOptions. Throws InvalidReferenceError for a malformed `ref`. */
export async function pullImage(c: ContainerdClient, ns: string, ref: string, opts: PullOptions = {}): Promise<PullResult> {
  const parsed = requireImageReference(ref);
  const name = formatImageReference(parsed);
  // A digest names its content for good, so a complete image pinned by digest never needs the registry.
  if (opts.policy === 'ifNotPresent' || parsed.digest) {
    const have = await imageComplete(c, ns, name);
    if (have && (!parsed.digest || have.target.digest === parsed.digest)) return { name: have.name, digest: have.target.digest, size: imageSize(have), createdAt: new Date(), fetchedBytes: 0 };
  }
  const registry = new RegistryClient(parsed, { config: opts.registries, stallTimeoutMs: opts.stallTimeoutMs });
  try {
    return await withLease(c, ns, async (lease) => {
      const p: PullContext = { c, ns, call: { lease }, registry, opts, fetched: 0 };
      opts.onProgress?.({ digest: '', offset: 0, total: 0, done: false });
      const top = await registry.resolve();
      opts.onProgress?.({ digest: top.descriptor.digest, offset: top.descriptor.size, total: top.descriptor.size, done: true });
      let manifestDesc = top.descriptor;
      let manifestBody = top.body;
      if (isIndex(top.descriptor.mediaType)) {
        const index = JSON.parse(top.body.toString('utf8')) as ImageIndex;
        manifestDesc = chooseManifest(index.manifests ?? [], nodePlatform());
        if (!isManifest(manifestDesc.mediaType)) throw new RegistryError('protocol', `${name}: nested indexes are not supported`);
        manifestBody = await manifestBytes(p, manifestDesc);
      } else if (!isManifest(top.descriptor.mediaType)) {
        throw new RegistryError('protocol', `${name}: unsupported manifest type ${top.descriptor.mediaType}`);
      }
      const { manifest, config } = await storeManifest(p, manifestDesc, manifestBody);
      if (manifestDesc !== top.descriptor) await writeContent(c, ns, ingestRef('index', top.descriptor.digest), top.body, top.descriptor, childGcLabels([manifestDesc]), p.call);
      await unpack(c, ns, manifest, config, { snapshotter: DEFAULT_SNAPSHOTTER, lease });
      // Last: the record that makes the image exist.
      const rec = await putImage(c, ns, name, top.descriptor, {}, p.call);
      return { name, digest: top.descriptor.digest, size: imageSize({ target: top.descriptor, manifestDesc, manifest }), createdAt: timestampToDate(rec.created_at), fetchedBytes: p.fetched };
    });
  } finally {
    registry.close();
  }
}
