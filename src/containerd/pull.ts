// Image pull, the work containerd 1.6 leaves to its client: resolve the reference at the
// registry (mirrors first), pick this node's manifest from an index, stream every blob into the
// content store with its digest checked (resuming with Range when the registry stalls or drops
// the connection), unpack the layers into the snapshotter, and only then create the image
// record, so that an image either is whole or does not exist. Content already in the store is
// not fetched again, and an image already complete is not looked up at all unless asked.
import { type ContainerdClient, type CallOptions } from './client.ts';
import { BlobSizeError, type Ingest, contentInfo, ingestRef, isRefLocked, openIngest, readContent, writeContent } from './content.ts';
import { imageComplete, imageSize, putImage, withLease, type ResolvedImage } from './images.ts';
import { type Descriptor, type ImageConfig, type ImageIndex, type ImageManifest, type Platform, isConfig, isIndex, isManifest } from './media-types.ts';
import { chooseManifest, nodePlatform } from './platform.ts';
import { formatReference, parseReference } from './reference.ts';
import { RegistryClient, RegistryError } from './registry.ts';
import type { ImageInfo, PullProgress, RegistryConfig } from './types.ts';
import { DEFAULT_SNAPSHOTTER, unpack } from './unpack.ts';

export interface PullOptions {
  registries?: RegistryConfig;
  platform?: Platform;
  onProgress?: (p: PullProgress) => void;
  /**
   * `always` (the API's Pull, as `docker pull`): resolve the tag at the registry, fetch only
   * what is missing. `ifNotPresent` (a container's start): a complete image in the store is
   * used as it is, without the registry.
   */
  policy?: 'always' | 'ifNotPresent';
  snapshotter?: string;
  /** Registry stall timeout (ms) before a blob fetch is retried from where it was. */
  stallTimeoutMs?: number;
  /** Attempts per blob that make no progress before the pull fails. */
  retries?: number;
  /** Blobs fetched at once. */
  concurrency?: number;
  signal?: AbortSignal;
}

/** What a pull tells its caller: the stored image and how many bytes it fetched. */
export interface PullResult extends ImageInfo {
  /** Bytes of blobs fetched from the registry by this pull (0: everything was already there). */
  fetchedBytes: number;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason);
    }, { once: true });
  });

/** Runs `f` over `items`, at most `n` at once, failing fast. */
async function eachLimited<T>(items: T[], n: number, f: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await f(items[next++]!);
    }),
  );
}

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
 * Fetches one blob into the content store unless it is there. Retries a fetch that fails
 * (stall, dropped connection, 5xx) from the offset reached, `retries` times in a row without
 * progress; a digest mismatch or an auth refusal is not retried.
 */
async function fetchBlob(p: PullContext, desc: Descriptor): Promise<void> {
  const report = (offset: number, done: boolean) => p.opts.onProgress?.({ digest: desc.digest, offset, total: desc.size, done });
  if (await contentInfo(p.c, p.ns, desc.digest, p.call)) {
    report(desc.size, true);
    return;
  }
  const ref = ingestRef(kindOf(desc), desc.digest);
  let ingest: Ingest | undefined;
  for (let locked = 0; ; locked++) {
    try {
      ingest = await openIngest(p.c, p.ns, ref, desc, p.call);
      break;
    } catch (err) {
      // Another pull is writing the same blob: wait for it, then take what it stored.
      if (!isRefLocked(err) || locked > 600) throw err;
      await sleep(100, p.opts.signal);
      if (await contentInfo(p.c, p.ns, desc.digest, p.call)) break;
    }
  }
  if (!ingest) {
    report(desc.size, true);
    return;
  }
  const retries = p.opts.retries ?? 5;
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
      if (p.opts.signal?.aborted) {
        await ingest.abort().catch(() => {});
        throw err;
      }
      const fatal = err instanceof RegistryError && (err.kind === 'auth' || err.kind === 'not-found' || err.kind === 'digest');
      failures = ingest.offset > before ? 1 : failures + 1;
      if (fatal || failures > retries || err instanceof BlobSizeError) {
        await ingest.abort().catch(() => {});
        throw err;
      }
      await sleep(Math.min(200 * 2 ** (failures - 1), 5000), p.opts.signal);
    }
  }
  await ingest.commit();
  report(desc.size, true);
}

/** A manifest or index's bytes: from the store if it has them, else from the registry (then stored with its GC labels). */
async function manifestBytes(p: PullContext, desc: Descriptor): Promise<Buffer> {
  if (await contentInfo(p.c, p.ns, desc.digest, p.call)) return readContent(p.c, p.ns, desc.digest, p.call);
  return (await p.registry.manifest(desc.digest)).body;
}

/** containerd's ChildGCLabels: the labels by which a parent blob keeps its children from GC. */
export function childGcLabels(children: Descriptor[]): Record<string, string> {
  const labels: Record<string, string> = {};
  const counts = new Map<string, number>();
  for (const ch of children) {
    const key = isConfig(ch.mediaType) ? 'containerd.io/gc.ref.content.config' : isManifest(ch.mediaType) ? 'containerd.io/gc.ref.content.m.' : ch.mediaType.includes('.layer.') || ch.mediaType.includes('rootfs.diff') ? 'containerd.io/gc.ref.content.l.' : 'containerd.io/gc.ref.content.';
    const idx = counts.get(key) ?? 0;
    counts.set(key, idx + 1);
    labels[idx > 0 || key.endsWith('.') ? `${key}${idx}` : key] = ch.digest;
  }
  return labels;
}

/** Stores a platform manifest's blobs and the manifest itself (bottom-up: a stored parent always has its children). */
async function storeManifest(p: PullContext, desc: Descriptor, body: Buffer): Promise<{ manifest: ImageManifest; config: ImageConfig }> {
  const manifest = JSON.parse(body.toString('utf8')) as ImageManifest;
  if (!manifest.config || !Array.isArray(manifest.layers)) throw new RegistryError('protocol', `manifest ${desc.digest} has no config or layers`);
  const blobs = [manifest.config, ...manifest.layers];
  await eachLimited(blobs, p.opts.concurrency ?? 3, (b) => fetchBlob(p, b));
  await writeContent(p.c, p.ns, ingestRef('manifest', desc.digest), body, desc, childGcLabels(blobs), p.call);
  const config = JSON.parse((await readContent(p.c, p.ns, manifest.config.digest, p.call)).toString('utf8')) as ImageConfig;
  return { manifest, config };
}

/** Pulls `ref` into the namespace; see PullOptions. */
export async function pullImage(c: ContainerdClient, ns: string, ref: string, opts: PullOptions = {}): Promise<PullResult> {
  const parsed = parseReference(ref);
  const name = formatReference(parsed);
  const snapshotter = opts.snapshotter ?? DEFAULT_SNAPSHOTTER;
  const platform = opts.platform ?? nodePlatform();
  // A digest names its content for good, so a complete image pinned by digest never needs the registry.
  if (opts.policy === 'ifNotPresent' || parsed.digest) {
    const have = await imageComplete(c, ns, name, snapshotter);
    if (have && (!parsed.digest || have.target.digest === parsed.digest)) return { ...resultOf(have), fetchedBytes: 0 };
  }
  const registry = new RegistryClient(parsed, { config: opts.registries, stallTimeoutMs: opts.stallTimeoutMs, signal: opts.signal });
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
        manifestDesc = chooseManifest(index.manifests ?? [], platform);
        if (!isManifest(manifestDesc.mediaType)) throw new RegistryError('protocol', `${name}: nested indexes are not supported`);
        manifestBody = await manifestBytes(p, manifestDesc);
      } else if (!isManifest(top.descriptor.mediaType)) {
        throw new RegistryError('protocol', `${name}: unsupported manifest type ${top.descriptor.mediaType}`);
      }
      const { manifest, config } = await storeManifest(p, manifestDesc, manifestBody);
      if (manifestDesc !== top.descriptor) await writeContent(c, ns, ingestRef('index', top.descriptor.digest), top.body, top.descriptor, childGcLabels([manifestDesc]), p.call);
      await unpack(c, ns, manifest, config, manifest.config, { snapshotter, lease });
      // Last: the record that makes the image exist.
      const rec = await putImage(c, ns, name, top.descriptor, {}, p.call);
      const resolved: ResolvedImage = { name, target: top.descriptor, manifestDesc, manifest, configDesc: manifest.config, config, chainId: '' };
      return { ...resultOf(resolved, rec.created_at ? new Date(Number(rec.created_at.seconds) * 1000) : new Date()), fetchedBytes: p.fetched };
    });
  } finally {
    registry.close();
  }
}

function resultOf(image: ResolvedImage, createdAt = new Date()): ImageInfo {
  return { name: image.name, digest: image.target.digest, size: imageSize(image), createdAt };
}
