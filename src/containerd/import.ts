// Import of an OCI image archive (`oci-archive`: a tar, optionally gzip, of an OCI image layout:
// oci-layout, index.json, blobs/<alg>/<hex>), streamed in: each blob goes into the content store
// as it comes by, its digest checked against its name; then each image the index names is
// checked whole, labelled for GC, unpacked, and recorded. Docker 25+'s `docker save` writes this
// layout too. Names come from the index entries' `io.containerd.image.name` annotation (as
// `ctr export` writes it), else a full reference in `org.opencontainers.image.ref.name`.
// An older `docker save` archive (manifest.json, <id>/layer.tar, <hex>.json, no index.json) is
// taken too: its files are stored under the digests they turn out to have, and a Docker schema 2
// manifest is written for each image it lists, named by its RepoTags.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { requireNormalizedImageReference } from '../config/image-ref.ts';
import type { ContainerdClient, CallOptions } from './client.ts';
import { type BlobRef, contentInfo, ingestRef, openIngest, readContent, setContentLabels, sha256, writeContent, writeUnknown } from './content.ts';
import { imageSize, platformManifest, putImage, withLease } from './images.ts';
import { DOCKER_CONFIG, DOCKER_LAYER, DOCKER_LAYER_GZIP, DOCKER_MANIFEST, type Descriptor, type ImageConfig, type ImageIndex, childGcLabels } from './media-types.ts';
import type { ImageInfo } from './types.ts';
import { DEFAULT_SNAPSHOTTER, unpack } from './unpack.ts';

const SMALL_FILE_LIMIT = 8 * 1024 * 1024;
const BLOB_PATH = /^blobs\/(sha256|sha512)\/([0-9a-f]{64,128})$/;
/** The files of an older `docker save` archive that hold image data: layers and configs. */
const DOCKER_SAVE_FILE = /^(?:[^/]+\/layer\.tar|[0-9a-f]{64}\.json)$/;

/** The stream with a gunzip in front if it starts with gzip's magic bytes. */
async function* maybeGunzip(archive: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  const it = archive[Symbol.asyncIterator]();
  let first = await it.next();
  while (!first.done && first.value.length === 0) first = await it.next();
  if (first.done) return;
  async function* rest(): AsyncIterable<Uint8Array> {
    yield first.value!;
    for (;;) {
      const n = await it.next();
      if (n.done) return;
      yield n.value;
    }
  }
  if (first.value[0] === 0x1f && first.value[1] === 0x8b) yield* Readable.from(rest()).pipe(zlib.createGunzip());
  else yield* rest();
}

async function readSmall(entry: AsyncIterable<unknown>, name: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const chunk of entry) {
    n += (chunk as Buffer).length;
    if (n > SMALL_FILE_LIMIT) throw new Error(`archive: ${name} is larger than ${SMALL_FILE_LIMIT} bytes`);
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts);
}

/** The image name an index entry gives, normalized, or undefined. */
export function importName(desc: Descriptor): string | undefined {
  const a = desc.annotations ?? {};
  const name = a['io.containerd.image.name'] ?? a['org.opencontainers.image.ref.name'];
  // A bare tag (`latest`, `1`) in ref.name names no repository.
  if (!name || !/[/:@]/.test(name)) return undefined;
  return requireNormalizedImageReference(name);
}

/** Imports the archive into the namespace; resolves with the images it named. */
export async function importImage(c: ContainerdClient, ns: string, archive: AsyncIterable<Uint8Array>): Promise<ImageInfo[]> {
  return withLease(c, ns, async (lease) => {
    const call: CallOptions = { lease };
    const files = new Map<string, Buffer>();
    const byPath = new Map<string, BlobRef & { gzip: boolean }>();
    const extract = tar.extract();
    const feeding = pipeline(Readable.from(maybeGunzip(archive)), extract as unknown as NodeJS.WritableStream);
    try {
      for await (const entry of extract) {
        const name = entry.header.name.replace(/^\.\//, '');
        const blob = BLOB_PATH.exec(name);
        if (entry.header.type !== 'file' && entry.header.type !== 'contiguous-file') {
          entry.resume();
        } else if (blob) {
          const desc = { digest: `${blob[1]}:${blob[2]}`, size: entry.header.size ?? 0 };
          const ingest = await openIngest(c, ns, ingestRef('unknown', desc.digest), desc, call);
          if (!ingest) {
            for await (const _ of entry) void _;
          } else {
            try {
              for await (const chunk of entry) await ingest.write(chunk as Buffer);
              await ingest.commit();
            } catch (err) {
              await ingest.abort().catch(() => {});
              throw err;
            }
          }
        } else if (name === 'index.json' || name === 'oci-layout' || name === 'manifest.json') {
          files.set(name, await readSmall(entry, name));
        } else if (DOCKER_SAVE_FILE.test(name)) {
          byPath.set(name, await writeUnknown(c, ns, `import-${lease}-${name}`, entry as AsyncIterable<Uint8Array>, call));
        } else {
          entry.resume();
        }
      }
      await feeding;
    } catch (err) {
      extract.destroy();
      await feeding.catch(() => {});
      throw new Error(`image import: ${(err as Error).message}`, { cause: err });
    }
    const indexJson = files.get('index.json');
    if (!indexJson) {
      const manifestJson = files.get('manifest.json');
      if (!manifestJson) throw new Error('image import: neither an OCI image archive (index.json) nor a docker-save archive (manifest.json)');
      const tops = await dockerSaveManifests(c, ns, manifestJson, byPath, call);
      const out: ImageInfo[] = [];
      for (const { name, desc } of tops) out.push(await finishImage(c, ns, name, desc, call));
      return out;
    }
    const index = JSON.parse(indexJson.toString('utf8')) as ImageIndex;
    const out: ImageInfo[] = [];
    for (const top of index.manifests ?? []) {
      const name = importName(top);
      if (!name) throw new Error(`image import: index entry ${top.digest} has no image name (annotation io.containerd.image.name, or a full reference in org.opencontainers.image.ref.name)`);
      out.push(await finishImage(c, ns, name, top, call));
    }
    return out;
  });
}

/** Checks an imported image whole, labels its blobs for GC, unpacks it and records it. */
async function finishImage(c: ContainerdClient, ns: string, name: string, top: Descriptor, call: CallOptions): Promise<ImageInfo> {
  const target: Descriptor = { mediaType: top.mediaType, digest: top.digest, size: top.size };
  const need = async (d: Descriptor) => {
    if (!(await contentInfo(c, ns, d.digest, call))) throw new Error(`image import: ${name}: the archive lacks blob ${d.digest}`);
  };
  await need(target);
  const { desc: manifestDesc, manifest, index } = await platformManifest(c, ns, target);
  for (const b of [manifest.config, ...manifest.layers]) await need(b);
  await setContentLabels(c, ns, manifestDesc.digest, childGcLabels([manifest.config, ...manifest.layers]), call);
  if (index) await labelIndex(c, ns, target, index, manifestDesc, call);
  const config = JSON.parse((await readContent(c, ns, manifest.config.digest, call)).toString('utf8')) as ImageConfig;
  await unpack(c, ns, manifest, config, { snapshotter: DEFAULT_SNAPSHOTTER, lease: call.lease });
  const rec = await putImage(c, ns, name, target, {}, call);
  return { name: rec.name, digest: target.digest, size: imageSize({ target, manifestDesc, manifest }), createdAt: new Date() };
}

/** Labels the index `top` with the child that leads to the chosen manifest. */
async function labelIndex(c: ContainerdClient, ns: string, top: Descriptor, index: ImageIndex, chosen: Descriptor, call: CallOptions): Promise<void> {
  const child = index.manifests.find((m) => m.digest === chosen.digest);
  if (child) await setContentLabels(c, ns, top.digest, childGcLabels([child]), call);
}

/**
 * Writes a Docker schema 2 manifest for each image of a docker-save manifest.json, from the
 * files stored by path; the images with the names of their RepoTags.
 */
async function dockerSaveManifests(c: ContainerdClient, ns: string, manifestJson: Buffer, byPath: Map<string, BlobRef & { gzip: boolean }>, call: CallOptions): Promise<{ name: string; desc: Descriptor }[]> {
  const entries = JSON.parse(manifestJson.toString('utf8')) as { Config: string; RepoTags?: string[] | null; Layers: string[] }[];
  const out: { name: string; desc: Descriptor }[] = [];
  for (const e of entries) {
    const file = (p: string) => {
      const b = byPath.get(p.replace(/^\.\//, ''));
      if (!b) throw new Error(`image import: the archive lacks ${p}`);
      return b;
    };
    const cfg = file(e.Config);
    const manifest = {
      schemaVersion: 2,
      mediaType: DOCKER_MANIFEST,
      config: { mediaType: DOCKER_CONFIG, digest: cfg.digest, size: cfg.size },
      layers: e.Layers.map((l) => {
        const b = file(l);
        return { mediaType: b.gzip ? DOCKER_LAYER_GZIP : DOCKER_LAYER, digest: b.digest, size: b.size };
      }),
    };
    const body = Buffer.from(JSON.stringify(manifest));
    const desc: Descriptor = { mediaType: DOCKER_MANIFEST, digest: sha256(body), size: body.length };
    await writeContent(c, ns, ingestRef('manifest', desc.digest), body, desc, {}, call);
    const tags = e.RepoTags ?? [];
    if (tags.length === 0) throw new Error(`image import: docker-save image ${cfg.digest} has no RepoTags to name it by`);
    for (const t of tags) out.push({ name: requireNormalizedImageReference(t), desc });
  }
  return out;
}
