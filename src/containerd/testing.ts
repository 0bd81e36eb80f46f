// An in-memory WorkloadsApi (./types.ts) for the tests of what is written against it (machined's
// container and image API handlers): images and containers per namespace, logs as text, pulls
// that report scripted progress. It keeps containerd's behaviour where callers depend on it:
// namespaces are independent, an unknown image or container is an error with gRPC's NOT_FOUND
// code (as containerd's own API answers) and the runtime's message, a restart makes a new
// instance (a new pid).
import type { ImageInfo, InstanceInfo, InstanceStats, PullProgress, WorkloadsApi } from './types.ts';

const NOT_FOUND = 5; // grpc.status.NOT_FOUND, without importing grpc-js into the runtime's types

/** An error as containerd's API reports it: a gRPC status code and its message. */
export class RuntimeError extends Error {
  override name = 'RuntimeError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface MemoryContainer {
  info: InstanceInfo;
  stats?: { memoryUsage: number; cpuUsageNanos: number };
  /** What the container has written so far, line by line. */
  log: string[];
}

export class MemoryWorkloads implements WorkloadsApi {
  /** namespace → image name → image. */
  readonly images = new Map<string, Map<string, ImageInfo>>();
  /** namespace → container id → container. */
  readonly containers = new Map<string, Map<string, MemoryContainer>>();
  /** What the next pulls report, by ref: the progress steps, or an error to fail with. */
  readonly pulls = new Map<string, { steps?: PullProgress[]; fail?: Error; digest?: string; size?: number }>();
  /** Every call, as `method namespace arg`, for tests to check what was asked. */
  readonly calls: string[] = [];
  /** The bytes of every archive imported, in order. */
  readonly imported: Buffer[] = [];
  /** The image names an import yields (default: one, `import/image:<n>`). */
  importNames: string[] | undefined;
  #followers = new Map<string, Set<(line: string) => void>>();
  #nextPid = 1000;

  #ns<T>(map: Map<string, Map<string, T>>, ns: string): Map<string, T> {
    let m = map.get(ns);
    if (!m) map.set(ns, (m = new Map()));
    return m;
  }

  addImage(namespace: string, image: Partial<ImageInfo> & { name: string }): ImageInfo {
    const info: ImageInfo = { digest: `sha256:${'0'.repeat(64)}`, size: 0, createdAt: new Date(0), ...image };
    this.#ns(this.images, namespace).set(info.name, info);
    return info;
  }

  addContainer(namespace: string, c: Partial<InstanceInfo> & { id: string }, extra: { stats?: MemoryContainer['stats']; log?: string[] } = {}): MemoryContainer {
    const info: InstanceInfo = { namespace, image: '', pid: this.#nextPid++, status: 'running', cgroup: `/taloscontainers/${c.id}`, labels: {}, ...c };
    const entry: MemoryContainer = { info, log: extra.log ?? [], ...(extra.stats ? { stats: extra.stats } : {}) };
    this.#ns(this.containers, namespace).set(c.id, entry);
    return entry;
  }

  /** Appends a line to a container's log, as its process writing it. */
  write(namespace: string, id: string, line: string): void {
    this.#container(namespace, id).log.push(line);
    for (const f of this.#followers.get(`${namespace}/${id}`) ?? []) f(line);
  }

  #container(namespace: string, id: string): MemoryContainer {
    const c = this.containers.get(namespace)?.get(id);
    if (!c) throw new RuntimeError(NOT_FOUND, `container ${namespace}/${id} not found`); // as ./runtime.ts
    return c;
  }

  async listImages(namespace: string): Promise<ImageInfo[]> {
    this.calls.push(`listImages ${namespace}`);
    return [...(this.images.get(namespace)?.values() ?? [])];
  }

  async pullImage(namespace: string, ref: string, onProgress?: (p: PullProgress) => void): Promise<ImageInfo> {
    this.calls.push(`pullImage ${namespace} ${ref}`);
    const script = this.pulls.get(ref) ?? {};
    for (const step of script.steps ?? []) {
      onProgress?.(step);
      await new Promise((r) => setImmediate(r));
    }
    if (script.fail) throw script.fail;
    return this.addImage(namespace, { name: ref, ...(script.digest ? { digest: script.digest } : {}), size: script.size ?? 0, createdAt: new Date() });
  }

  async importImage(namespace: string, archive: AsyncIterable<Uint8Array>): Promise<ImageInfo[]> {
    this.calls.push(`importImage ${namespace}`);
    const parts: Buffer[] = [];
    for await (const chunk of archive) parts.push(Buffer.from(chunk));
    const bytes = Buffer.concat(parts);
    this.imported.push(bytes);
    const names = this.importNames ?? [`import/image:${this.imported.length}`];
    return names.map((name) => this.addImage(namespace, { name, size: bytes.length, createdAt: new Date() }));
  }

  async removeImage(namespace: string, ref: string): Promise<void> {
    this.calls.push(`removeImage ${namespace} ${ref}`);
    if (!this.images.get(namespace)?.delete(ref)) throw new RuntimeError(NOT_FOUND, `image ${ref} not found`); // as ./images.ts (which names it normalized)
  }

  async listContainers(namespace: string): Promise<InstanceInfo[]> {
    this.calls.push(`listContainers ${namespace}`);
    return [...(this.containers.get(namespace)?.values() ?? [])].map((c) => ({ ...c.info }));
  }

  async stats(namespace: string): Promise<InstanceStats[]> {
    this.calls.push(`stats ${namespace}`);
    const out: InstanceStats[] = [];
    for (const c of this.containers.get(namespace)?.values() ?? []) {
      if (c.stats) out.push({ id: c.info.id, namespace, ...c.stats });
    }
    return out;
  }

  logs(namespace: string, id: string, opts: { follow: boolean; tailLines: number; signal?: AbortSignal }): AsyncIterable<Uint8Array> {
    this.calls.push(`logs ${namespace} ${id}`);
    const c = this.#container(namespace, id);
    const key = `${namespace}/${id}`;
    const followers = this.#followers;
    return (async function* () {
      const history = opts.tailLines < 0 ? [...c.log] : opts.tailLines === 0 ? [] : c.log.slice(-opts.tailLines);
      // Subscribe before replaying, so that no line written meanwhile is lost.
      const queue: string[] = [];
      let wake: (() => void) | undefined;
      const onLine = (line: string) => {
        queue.push(line);
        wake?.();
      };
      if (opts.follow) {
        if (!followers.has(key)) followers.set(key, new Set());
        followers.get(key)!.add(onLine);
      }
      try {
        for (const line of history) yield Buffer.from(`${line}\n`);
        if (!opts.follow) return;
        while (!opts.signal?.aborted) {
          const line = queue.shift();
          if (line !== undefined) {
            yield Buffer.from(`${line}\n`);
            continue;
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
            opts.signal?.addEventListener('abort', () => resolve(), { once: true });
          });
          wake = undefined;
        }
      } finally {
        followers.get(key)?.delete(onLine);
      }
    })();
  }

  async restart(namespace: string, id: string): Promise<void> {
    this.calls.push(`restart ${namespace} ${id}`);
    const c = this.#container(namespace, id);
    c.info = { ...c.info, pid: this.#nextPid++, status: 'running' };
  }
}
