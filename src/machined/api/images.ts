// machine.ImageService (Talos's api/machine/image.proto): the images in the node's containerd,
// over the container runtime (src/containerd/types.ts's WorkloadsApi, through a getter: it is
// undefined until containerd is up, and every call then answers UNAVAILABLE).
//
// Which namespace, from the request's common.ContainerdInstance, as Talos's
// ctrhelper.ContainerdInstanceHelper checks it: NS_SYSTEM is containerd's `system` namespace;
// NS_CRI is, on Talos, the namespace Kubernetes' pods pull into. Bronze has no Kubernetes: its
// workloads are ContainerConfig containers in `taloscontainers`, so NS_CRI (talosctl's default,
// `--namespace cri`) names that one, and an image pulled or imported there is what a
// ContainerConfig runs. NS_CRI with the CONTAINERD driver is refused, as Talos refuses it.
//
// Replies as Talos's: List streams one message per image; Pull streams progress per layer
// (layer ids as Talos's, the digest's first 12 hex digits) and ends with the image's name
// pinned to its digest (`registry/repo@sha256:...`); Import takes the instance in its first
// message and the archive in the others, and answers the first image's name; Remove answers
// NOT_FOUND for an image the namespace does not have. Verify: Bronze has no image verification
// rules (Talos's ImageVerificationConfig), so no rule matches any image and it answers
// verified = false, as Talos does then.
import type * as grpc from '@grpc/grpc-js';
import { CONTAINERS_NAMESPACE, SYSTEM_NAMESPACE, type ImageInfo, type PullProgress } from '../../containerd/types.ts';
import { MessageReader, type Timestamp, invalidArgument, serverStream, toServiceError, toTimestamp, unary } from './common.ts';
import { type WorkloadsSource, runtimeOf } from './containers.ts';

interface ContainerdInstance {
  driver?: string | number;
  namespace?: string | number;
}

/** The containerd namespace a request's ContainerdInstance names, checked as Talos checks it. */
export function imageNamespace(instance: ContainerdInstance | null | undefined): string {
  const driver = instance?.driver ?? 'CONTAINERD';
  const ns = instance?.namespace ?? 'NS_UNKNOWN';
  const cri = driver === 'CRI' || driver === 1;
  if (!cri && driver !== 'CONTAINERD' && driver !== 0) throw invalidArgument(`invalid containerd driver ${JSON.stringify(driver)}`);
  if (ns === 'NS_SYSTEM' || ns === 1) return SYSTEM_NAMESPACE;
  if (ns === 'NS_CRI' || ns === 2) {
    if (!cri) throw invalidArgument('cannot use CRI namespace with containerd driver');
    return CONTAINERS_NAMESPACE;
  }
  throw invalidArgument(`invalid containerd namespace ${JSON.stringify(ns)}: NS_SYSTEM or NS_CRI`);
}

/** Talos's layer id: the digest's hex, truncated as Docker's stringid.TruncateID (12 digits). */
export function layerId(digest: string): string {
  const hex = digest.includes(':') ? digest.slice(digest.indexOf(':') + 1) : digest;
  return hex.slice(0, 12);
}

/** The pulled image's name as Talos answers it: pinned to its digest unless the ref already was. */
export function pinnedName(ref: string, image: ImageInfo): string {
  if (ref.includes('@') || image.name.includes('@') || !image.digest) return image.name;
  // Drop the tag: a ':' after the last '/' (a ':' before it is the registry's port).
  const repo = image.name.replace(/:[^/]*$/, '');
  return `${repo}@${image.digest}`;
}

function listItem(image: ImageInfo) {
  return { name: image.name, digest: image.digest, size: image.size, created_at: toTimestamp(image.createdAt), labels: {} };
}

interface PullMessage {
  name?: string;
  pull_progress?: { layer_id: string; progress: { status: string; elapsed: Timestamp; offset: number; total: number } };
}

/**
 * A progress report as Talos's message for its layer, or undefined for the manifest stage (no
 * digest: Talos reports layers only). `started` keeps when each layer was first reported.
 */
function progressMessage(p: PullProgress, started: Map<string, number>, now = Date.now()): PullMessage | undefined {
  if (!p.digest) return undefined;
  const id = layerId(p.digest);
  if (!started.has(id)) started.set(id, now);
  return {
    pull_progress: {
      layer_id: id,
      progress: { status: p.done ? 'DOWNLOAD_COMPLETE' : 'DOWNLOADING', elapsed: toTimestamp(now - started.get(id)!), offset: p.offset, total: p.total },
    },
  };
}

interface ImportRequest {
  request?: 'containerd' | 'image_chunk';
  containerd?: ContainerdInstance | null;
  image_chunk?: { bytes?: Buffer | Uint8Array } | null;
}

export function imageHandlers(deps: { workloads?: WorkloadsSource } = {}) {
  return {
    List: serverStream<{ containerd?: ContainerdInstance | null }, ReturnType<typeof listItem>>(async (req, stream) => {
      const ns = imageNamespace(req.containerd);
      const w = runtimeOf(deps.workloads);
      const images = await w.listImages(ns);
      for (const image of images.sort((a, b) => a.name.localeCompare(b.name))) {
        if (stream.closed) return;
        await stream.send(listItem(image));
      }
    }),

    Pull: serverStream<{ containerd?: ContainerdInstance | null; image_ref?: string }, PullMessage>(async (req, stream) => {
      const ns = imageNamespace(req.containerd);
      const ref = (req.image_ref ?? '').trim();
      if (ref === '') throw invalidArgument('image reference is required');
      const w = runtimeOf(deps.workloads);
      // Progress is pushed as it comes (Stream.push: a client that falls too far behind is cut off).
      const started = new Map<string, number>();
      const image = await w.pullImage(ns, ref, (p) => {
        const msg = progressMessage(p, started);
        if (msg) stream.push(msg);
      });
      await stream.send({ name: pinnedName(ref, image) });
    }),

    // Client stream: the instance first, then the archive. The chunks are handed to the
    // runtime as they arrive (MessageReader: the client waits while the runtime is slow).
    Import: (call: grpc.ServerReadableStream<ImportRequest, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const reader = new MessageReader<ImportRequest>(call as unknown as grpc.ServerDuplexStream<ImportRequest, unknown>);
      const archive = async function* (): AsyncGenerator<Uint8Array> {
        for (;;) {
          const next = await reader.next();
          if (next.done) return;
          const chunk = next.value.image_chunk;
          if (next.value.request !== 'image_chunk' || !chunk) throw invalidArgument('after the containerd instance, every message must be an image chunk');
          if (chunk.bytes?.length) yield chunk.bytes;
        }
      };
      Promise.resolve()
        .then(async () => {
          const first = await reader.next();
          if (first.done || first.value.request !== 'containerd') throw invalidArgument('containerd instance is required (the first message)');
          const ns = imageNamespace(first.value.containerd);
          const w = runtimeOf(deps.workloads);
          const images = await w.importImage(ns, archive());
          if (images.length === 0) throw invalidArgument('no images imported from archive');
          return { name: images[0]!.name };
        })
        .then(
          (reply) => callback(null, reply),
          (err: unknown) => callback(toServiceError(err)),
        );
    },

    Remove: unary(async (req: { containerd?: ContainerdInstance | null; image_ref?: string }) => {
      const ns = imageNamespace(req.containerd);
      const ref = (req.image_ref ?? '').trim();
      if (ref === '') throw invalidArgument('image reference is required');
      // An unknown image: the runtime's NOT_FOUND, `image <name> not found`.
      await runtimeOf(deps.workloads).removeImage(ns, ref);
      return {};
    }),

    Verify: unary((req: { image_ref?: string }) => {
      if (!(req.image_ref ?? '').trim()) throw invalidArgument('image reference is required');
      return { verified: false, message: 'no image verification rules are configured on this node', digested_image_ref: '' };
    }),
  };
}
