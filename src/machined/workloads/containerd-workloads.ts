// The node's container runtime over containerd: the engine's RuntimePort (the operator's
// declared containers, in Talos's `taloscontainers` namespace) and the API's WorkloadsApi
// (images and containers of any namespace), both on one connection to containerd's socket.
// The pieces are src/containerd/'s: pull, import and the image store (images.ts, pull.ts,
// import.ts) and the container runtime (runtime.ts); this file only joins them with the
// registry settings of the node's configuration.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { hostPathError } from '../../config/kinds-containers.ts';
import { type ContainerdClient, connectContainerd, jsonAny } from '../../containerd/client.ts';
import { imageComplete, listImages, removeImage } from '../../containerd/images.ts';
import { importImage } from '../../containerd/import.ts';
import { pullImage } from '../../containerd/pull.ts';
import { ContainerRuntime, type InstanceExit, LABEL_SPEC_HASH } from '../../containerd/runtime.ts';
import { TASKS } from '../../containerd/tasks.ts';
import { CONTAINERS_NAMESPACE, type ContainerRunSpec, type ImageInfo, type PullProgress, type RegistryConfig, type WorkloadsApi } from '../../containerd/types.ts';
import type { RuntimePort } from './engine.ts';

/**
 * The configuration's check of a hostPath source (kinds-containers.ts) sees the path as written;
 * a symbolic link under /var could still lead to a directory a container must not see. Each bind
 * source is resolved on the node before a start and checked again.
 */
export function checkBindSources(spec: ContainerRunSpec, realpath: (p: string) => string = fs.realpathSync): void {
  for (const m of spec.mounts) {
    if (m.type !== 'bind' || !m.source) continue;
    let real: string;
    try {
      real = realpath(m.source);
    } catch (err) {
      throw new Error(`hostPath ${m.source}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist on the node' : (err as Error).message}`);
    }
    const why = real === m.source ? undefined : hostPathError(real);
    if (why) throw new Error(`hostPath ${m.source} leads to ${real}, which is not allowed: ${why}`);
  }
}

export interface ContainerdWorkloadsOptions {
  socket: string;
  /** The registry settings of the configuration now (mirrors, auth, TLS). */
  registries: () => RegistryConfig;
  onExit?: (e: InstanceExit) => void;
  /**
   * The API's Restart of a container of the operator's namespace, offered to the engine first,
   * which keeps a declared container's status (pid, starts, probe); false: not a declared one.
   */
  restartDeclared?: (id: string) => Promise<boolean>;
  /** Overrides for tests (log and run directories, cgroup parent). */
  runtime?: Partial<ConstructorParameters<typeof ContainerRuntime>[0]>;
}

export class ContainerdWorkloads implements WorkloadsApi {
  readonly client: ContainerdClient;
  readonly runtime: ContainerRuntime;
  readonly #o: ContainerdWorkloadsOptions;

  constructor(o: ContainerdWorkloadsOptions) {
    this.#o = o;
    this.client = connectContainerd(o.socket);
    this.runtime = new ContainerRuntime({ client: this.client, namespace: CONTAINERS_NAMESPACE, ...(o.onExit ? { onExit: o.onExit } : {}), ...(o.runtime ?? {}) });
  }

  close(): void {
    this.runtime.close();
    this.client.close();
  }

  // ---- WorkloadsApi (the ImageService and the container RPCs) ----------------------------

  listImages(namespace: string): Promise<ImageInfo[]> {
    return listImages(this.client, namespace);
  }

  async pullImage(namespace: string, ref: string, onProgress?: (p: PullProgress) => void): Promise<ImageInfo> {
    return pullImage(this.client, namespace, ref, { registries: this.#o.registries(), policy: 'always', ...(onProgress ? { onProgress } : {}) });
  }

  importImage(namespace: string, archive: AsyncIterable<Uint8Array>): Promise<ImageInfo[]> {
    return importImage(this.client, namespace, archive);
  }

  removeImage(namespace: string, ref: string): Promise<void> {
    return removeImage(this.client, namespace, ref);
  }

  listContainers(namespace: string) {
    return this.runtime.listContainers(namespace);
  }

  stats(namespace: string) {
    return this.runtime.stats(namespace);
  }

  logs(namespace: string, id: string, opts: { follow: boolean; tailLines: number; signal?: AbortSignal }) {
    return this.runtime.logs(namespace, id, opts);
  }

  async restart(namespace: string, id: string): Promise<void> {
    if (namespace === CONTAINERS_NAMESPACE && (await this.#o.restartDeclared?.(id))) return;
    await this.runtime.restart(namespace, id);
  }

  // ---- RuntimePort (the engine's declared containers) ------------------------------------

  readonly port: RuntimePort = {
    imagePresent: async (ref) => !!(await imageComplete(this.client, CONTAINERS_NAMESPACE, ref)),
    pull: async (ref, onProgress) => {
      const r = await pullImage(this.client, CONTAINERS_NAMESPACE, ref, { registries: this.#o.registries(), policy: 'ifNotPresent', ...(onProgress ? { onProgress } : {}) });
      return { digest: r.digest };
    },
    start: async (spec: ContainerRunSpec, hash: string) => {
      checkBindSources(spec);
      const r = await this.runtime.ensureRunning(spec, { namespace: CONTAINERS_NAMESPACE, hash });
      return { pid: r.pid };
    },
    list: async () => {
      const list = await this.runtime.listContainers(CONTAINERS_NAMESPACE);
      return list.map((c) => ({ id: c.id, ...(c.labels[LABEL_SPEC_HASH] ? { hash: c.labels[LABEL_SPEC_HASH] } : {}), pid: c.pid, running: c.status === 'running' }));
    },
    remove: async (id) => {
      await this.runtime.remove(id, CONTAINERS_NAMESPACE);
    },
    exec: (id, argv, timeoutMs) => this.exec(CONTAINERS_NAMESPACE, id, argv, timeoutMs),
    restart: async (id) => {
      await this.runtime.restart(CONTAINERS_NAMESPACE, id);
      const c = (await this.runtime.listContainers(CONTAINERS_NAMESPACE)).find((x) => x.id === id);
      return { pid: c?.pid ?? 0 };
    },
  };

  /**
   * Runs argv in a running container (containerd's Tasks.Exec, the process spec a copy of the
   * container's own with other args), its output discarded; resolves with its exit status.
   * For exec health probes.
   */
  async exec(namespace: string, id: string, argv: string[], timeoutMs: number): Promise<number> {
    const { container } = await this.client.unary<{ container: { spec: { value: Buffer } } }>('containerd.services.containers.v1.Containers', 'Get', { id }, namespace);
    const spec = JSON.parse(Buffer.from(container.spec.value).toString('utf8')) as { process: Record<string, unknown> };
    const process = { ...spec.process, args: argv, terminal: false };
    const execId = `probe-${randomBytes(6).toString('hex')}`;
    const signal = AbortSignal.timeout(timeoutMs);
    await this.client.unary(TASKS, 'Exec', { container_id: id, exec_id: execId, stdin: '', stdout: '', stderr: '', terminal: false, spec: jsonAny('types.containerd.io/opencontainers/runtime-spec/1/Process', process) }, namespace);
    try {
      const waited = this.client.unary<{ exit_status: number }>(TASKS, 'Wait', { container_id: id, exec_id: execId }, namespace, { signal });
      await this.client.unary(TASKS, 'Start', { container_id: id, exec_id: execId }, namespace);
      return (await waited).exit_status;
    } catch (err) {
      if (signal.aborted) {
        await this.client.unary(TASKS, 'Kill', { container_id: id, exec_id: execId, signal: 9, all: false }, namespace).catch(() => {});
        throw new Error(`${argv.join(' ')}: no exit in ${timeoutMs} ms`);
      }
      throw err;
    } finally {
      await this.client.unary(TASKS, 'DeleteProcess', { container_id: id, exec_id: execId }, namespace).catch(() => {});
    }
  }
}
