// Unpacking an image's layers into a snapshotter, as containerd 1.6's client unpacker
// (unpacker.go, rootfs/apply.go) does it, since containerd leaves this to its client: per layer
// its chain id; a snapshot that exists is skipped; else Prepare on the parent, Diff.Apply the
// layer blob onto the mounts, check the diff id, Commit under the chain id. Then the labels
// containerd's GC and its own tools read: `containerd.io/uncompressed` on each layer blob and
// `containerd.io/gc.ref.snapshot.<snapshotter>` on the config, so the image keeps its snapshots.
import { randomBytes } from 'node:crypto';
import { type CallOptions, type ContainerdClient, isAlreadyExists, isNotFound } from './client.ts';
import { setContentLabels, sha256 } from './content.ts';
import type { ImageConfig, ImageManifest } from './media-types.ts';

const SNAPSHOTS = 'containerd.services.snapshots.v1.Snapshots';
const DIFF = 'containerd.services.diff.v1.Diff';
export const DEFAULT_SNAPSHOTTER = 'overlayfs';

/**
 * The chain ids of a layer stack (OCI image-spec, identity.ChainID): the first is the first
 * diff id; each next is sha256 of "<previous chain id> <diff id>".
 */
export function chainIds(diffIds: readonly string[]): string[] {
  const out: string[] = [];
  for (const d of diffIds) {
    const prev = out[out.length - 1];
    out.push(prev === undefined ? d : sha256(Buffer.from(`${prev} ${d}`)));
  }
  return out;
}

/** The snapshot key of an extraction (snapshots.UnpackKeyFormat: "extract-<unique> <chain id>"). */
function extractKey(chainId: string): string {
  return `extract-${process.hrtime.bigint() % 1000000000n}-${randomBytes(3).toString('base64url')} ${chainId}`;
}

/** Whether the snapshot exists. */
export async function snapshotExists(c: ContainerdClient, ns: string, snapshotter: string, key: string, opts?: CallOptions): Promise<boolean> {
  try {
    await c.unary(SNAPSHOTS, 'Stat', { snapshotter, key }, ns, opts);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

export interface UnpackOptions {
  snapshotter?: string;
  /** The pull's lease, so that nothing made here is collected before the image record holds it. */
  lease?: string;
}

/** Unpacks the image's layers; resolves with the top chain id (the image's rootfs snapshot). */
export async function unpack(c: ContainerdClient, ns: string, manifest: ImageManifest, config: ImageConfig, opts: UnpackOptions = {}): Promise<string> {
  const snapshotter = opts.snapshotter ?? DEFAULT_SNAPSHOTTER;
  const call: CallOptions = opts.lease ? { lease: opts.lease } : {};
  const diffIds = config.rootfs?.diff_ids ?? [];
  if (diffIds.length !== manifest.layers.length) throw new Error(`image config has ${diffIds.length} diff ids for ${manifest.layers.length} layers`);
  const chain = chainIds(diffIds);
  for (let i = 0; i < manifest.layers.length; i++) {
    const layer = manifest.layers[i]!;
    const chainId = chain[i]!;
    if (await snapshotExists(c, ns, snapshotter, chainId, call)) continue;
    const labels = { 'containerd.io/snapshot.ref': chainId };
    const parent = i > 0 ? chain[i - 1]! : '';
    let key = '';
    let mounts: unknown[] = [];
    for (let attempt = 1; ; attempt++) {
      key = extractKey(chainId);
      try {
        ({ mounts } = await c.unary<{ mounts: unknown[] }>(SNAPSHOTS, 'Prepare', { snapshotter, key, parent, labels }, ns, call));
        break;
      } catch (err) {
        if (!isAlreadyExists(err) || attempt >= 3) throw new Error(`failed to prepare extraction snapshot for layer ${layer.digest}: ${(err as Error).message}`);
      }
    }
    try {
      const { applied } = await c.unary<{ applied: { digest: string } }>(DIFF, 'Apply', { diff: { media_type: layer.mediaType, digest: layer.digest, size: layer.size, annotations: layer.annotations ?? {} }, mounts }, ns, call);
      if (applied.digest !== diffIds[i]) throw new Error(`layer ${layer.digest}: wrong diff id calculated on extraction: ${applied.digest}, the config says ${diffIds[i]}`);
      await c.unary(SNAPSHOTS, 'Commit', { snapshotter, name: chainId, key, labels }, ns, call);
    } catch (err) {
      await c.unary(SNAPSHOTS, 'Remove', { snapshotter, key }, ns, call).catch(() => {});
      // Another unpack of the same layer committed it first: as good.
      if (isAlreadyExists(err)) continue;
      throw err;
    }
    await setContentLabels(c, ns, layer.digest, { 'containerd.io/uncompressed': diffIds[i]! }, call);
  }
  const top = chain[chain.length - 1] ?? '';
  if (top) await setContentLabels(c, ns, manifest.config.digest, { [`containerd.io/gc.ref.snapshot.${snapshotter}`]: top }, call);
  return top;
}
