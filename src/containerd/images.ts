// containerd's image records (Images service) and what an image is made of, read back from the
// content store: list, get, create-or-update, remove (content and snapshots are left to
// containerd's garbage collector, which frees what no image references any more), and the
// image's run config for the runtime.
import { requireNormalizedImageReference } from '../config/image-ref.ts';
import { type CallOptions, type ContainerdClient, dateToTimestamp, isAlreadyExists, isNotFound, timestampToDate, type Timestamp } from './client.ts';
import { contentInfo, readContent } from './content.ts';
import { type Descriptor, type ImageConfig, type ImageIndex, type ImageManifest, type ImageRunConfig, type Platform, isIndex } from './media-types.ts';
import { chooseManifest, nodePlatform } from './platform.ts';
import type { ImageInfo } from './types.ts';
import { DEFAULT_SNAPSHOTTER, chainIds, snapshotExists } from './unpack.ts';

const IMAGES = 'containerd.services.images.v1.Images';
const LEASES = 'containerd.services.leases.v1.Leases';

/** An image record as the Images service has it (snake_case, as the protos). */
export interface ImageRecord {
  name: string;
  labels: Record<string, string>;
  target: { media_type: string; digest: string; size: string | number; annotations?: Record<string, string> };
  created_at?: Timestamp;
  updated_at?: Timestamp;
}

export const toDescriptor = (t: ImageRecord['target']): Descriptor => ({ mediaType: t.media_type, digest: t.digest, size: Number(t.size), ...(t.annotations && Object.keys(t.annotations).length ? { annotations: t.annotations } : {}) });

/** The record of `name` (normalized), or undefined. */
export async function getImage(c: ContainerdClient, ns: string, name: string, opts?: CallOptions): Promise<ImageRecord | undefined> {
  try {
    return (await c.unary<{ image: ImageRecord }>(IMAGES, 'Get', { name }, ns, opts)).image;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Creates the record of `name` pointing at `target`, or repoints an existing one. */
export async function putImage(c: ContainerdClient, ns: string, name: string, target: Descriptor, labels: Record<string, string> = {}, opts?: CallOptions): Promise<ImageRecord> {
  const now = dateToTimestamp(new Date());
  const image = { name, labels, target: { media_type: target.mediaType, digest: target.digest, size: target.size, annotations: target.annotations ?? {} }, created_at: now, updated_at: now };
  try {
    return (await c.unary<{ image: ImageRecord }>(IMAGES, 'Create', { image }, ns, opts)).image;
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    return (await c.unary<{ image: ImageRecord }>(IMAGES, 'Update', { image, update_mask: { paths: ['target', 'labels'] } }, ns, opts)).image;
  }
}

export async function listImageRecords(c: ContainerdClient, ns: string, filters: string[] = []): Promise<ImageRecord[]> {
  return (await c.unary<{ images: ImageRecord[] }>(IMAGES, 'List', { filters }, ns)).images;
}

/** Removes the image record; its content and snapshots go at containerd's next GC. */
export async function removeImage(c: ContainerdClient, ns: string, ref: string): Promise<void> {
  const name = requireNormalizedImageReference(ref);
  try {
    await c.unary(IMAGES, 'Delete', { name, sync: false }, ns);
  } catch (err) {
    if (isNotFound(err)) throw Object.assign(new Error(`image ${name} not found`), { code: 5 });
    throw err;
  }
}

/** What an image is, resolved for this node's platform: its manifest, config and their descriptors. */
export interface ResolvedImage {
  name: string;
  target: Descriptor;
  manifestDesc: Descriptor;
  manifest: ImageManifest;
  config: ImageConfig;
  /** The chain id of the top layer: the parent snapshot of a container's rootfs. */
  chainId: string;
}

async function readJson<T>(c: ContainerdClient, ns: string, desc: Descriptor): Promise<T> {
  return JSON.parse((await readContent(c, ns, desc.digest)).toString('utf8')) as T;
}

/**
 * The manifest for `platform` under `target` (itself, or the index's choice), from the content
 * store; with `index`, the index `target` is, when it is one.
 */
export async function platformManifest(c: ContainerdClient, ns: string, target: Descriptor, platform: Platform = nodePlatform()): Promise<{ desc: Descriptor; manifest: ImageManifest; index?: ImageIndex }> {
  let desc = target;
  let top: ImageIndex | undefined;
  for (let depth = 0; isIndex(desc.mediaType); depth++) {
    if (depth > 4) throw new Error(`image index ${target.digest} nests too deep`);
    const index = await readJson<ImageIndex>(c, ns, desc);
    top ??= index;
    desc = chooseManifest(index.manifests, platform);
  }
  return { desc, manifest: await readJson<ImageManifest>(c, ns, desc), ...(top ? { index: top } : {}) };
}

/** Resolves the image record `ref` to its manifest and config for this node. */
export async function resolveImage(c: ContainerdClient, ns: string, ref: string, platform?: Platform): Promise<ResolvedImage> {
  const name = requireNormalizedImageReference(ref);
  const rec = await getImage(c, ns, name);
  if (!rec) throw Object.assign(new Error(`image ${name} not found in namespace ${ns}`), { code: 5 });
  const target = toDescriptor(rec.target);
  const { desc: manifestDesc, manifest } = await platformManifest(c, ns, target, platform);
  const config = await readJson<ImageConfig>(c, ns, manifest.config);
  const chain = chainIds(config.rootfs?.diff_ids ?? []);
  return { name, target, manifestDesc, manifest, config, chainId: chain[chain.length - 1] ?? '' };
}

/**
 * The image's run config (Env, Entrypoint, Cmd, WorkingDir, User, ...) and the snapshot its
 * containers start from, for the runtime.
 */
export async function imageRunConfig(c: ContainerdClient, ns: string, ref: string): Promise<{ config: ImageRunConfig; chainId: string; image: ResolvedImage }> {
  const image = await resolveImage(c, ns, ref);
  return { config: image.config.config ?? {}, chainId: image.chainId, image };
}

/** The image's size as containerd's Image.Size counts it: its index, manifest, config and layers. */
export function imageSize(image: Pick<ResolvedImage, 'target' | 'manifestDesc' | 'manifest'>): number {
  let n = image.target.size;
  if (image.manifestDesc.digest !== image.target.digest) n += image.manifestDesc.size;
  n += image.manifest.config.size;
  for (const l of image.manifest.layers) n += l.size;
  return n;
}

/**
 * Whether everything the image needs on this node is present: its blobs, and its unpacked
 * snapshot. A complete image is not pulled again.
 */
export async function imageComplete(c: ContainerdClient, ns: string, ref: string): Promise<ResolvedImage | undefined> {
  let image: ResolvedImage;
  try {
    image = await resolveImage(c, ns, ref);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  if (image.chainId && !(await snapshotExists(c, ns, DEFAULT_SNAPSHOTTER, image.chainId))) return undefined;
  for (const l of image.manifest.layers) if (!(await contentInfo(c, ns, l.digest))) return undefined;
  return image;
}

/** ImageInfo of one record (size counted for this node's platform; 0 when its content is gone). */
export async function imageInfo(c: ContainerdClient, ns: string, rec: ImageRecord): Promise<ImageInfo> {
  let size = 0;
  try {
    const target = toDescriptor(rec.target);
    const { desc, manifest } = await platformManifest(c, ns, target);
    size = imageSize({ target, manifestDesc: desc, manifest });
  } catch {
    // An image whose content is not (all) there, or not for this platform: listed, size unknown.
  }
  return { name: rec.name, digest: rec.target.digest, size, createdAt: timestampToDate(rec.created_at) };
}

export async function listImages(c: ContainerdClient, ns: string): Promise<ImageInfo[]> {
  const recs = await listImageRecords(c, ns);
  return Promise.all(recs.map((r) => imageInfo(c, ns, r)));
}

/**
 * Runs `f` under a fresh lease, which holds all the content and snapshots it makes until the
 * image record does (containerd's GC could otherwise collect a blob written before any image
 * names it). The lease expires by itself within the hour if this process dies.
 */
export async function withLease<T>(c: ContainerdClient, ns: string, f: (lease: string) => Promise<T>): Promise<T> {
  const id = `bronze-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const expire = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  await c.unary(LEASES, 'Create', { id, labels: { 'containerd.io/gc.expire': expire } }, ns);
  try {
    return await f(id);
  } finally {
    await c.unary(LEASES, 'Delete', { id, sync: false }, ns).catch(() => {});
  }
}
