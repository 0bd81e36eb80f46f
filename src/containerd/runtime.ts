// Runs ContainerRunSpecs as containerd containers and keeps track of their tasks: the container
// half of WorkloadsApi (list, stats, logs, restart) and what machined's workload controller asks
// of it (ensureRunning, remove, and a callback on every exit).
//
// One container per document, its id the document's name: the container record (spec, labels,
// runtime io.containerd.runc.v2), an overlayfs snapshot of the same key on the image's top layer
// (its chain id), and at most one task at a time (one instance). The task's stdout and stderr go to
// a file the shim appends to (logs.ts). A changed document (another hash label) replaces
// container and snapshot; a restart replaces only the task, so the rootfs keeps its changes as
// Docker's restart does.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sleep } from '../lib/sleep.ts';
import { stableHash } from '../lib/stable-hash.ts';
import { type ContainerdClient, type Any, isAlreadyExists, isNotFound, jsonAny, RUNTIME_SPEC_TYPE_URL } from './client.ts';
import { CONTAINER_LOG_DIR, LOG_MAX_BYTES, containerLogPath, logURI, readLog, trimLog } from './logs.ts';
import { buildSpec, nofileWithin, type ImageConfig } from './spec.ts';
import { ownBoundingCaps, ownNofileHard, readHostDevices } from './spec-devices.ts';
import { imageRunConfig } from './images.ts';
import { decodeCgroupMetrics } from './stats.ts';
import { type Mount, type TaskExit, createTask, deleteTask, getTask, listTasks, startTask, stopTask, taskMetrics, waitTask } from './tasks.ts';
import { CONTAINERS_NAMESPACE, type ContainerRunSpec, type InstanceInfo, type InstanceStats, type WorkloadsApi } from './types.ts';

export const CONTAINERS = 'containerd.services.containers.v1.Containers';
export const SNAPSHOTS = 'containerd.services.snapshots.v1.Snapshots';
export const RUNC_RUNTIME = 'io.containerd.runc.v2';
export const SNAPSHOTTER = 'overlayfs';

/** Label holding the hash of the ContainerRunSpec a container was made from. */
export const LABEL_SPEC_HASH = 'bronze.dev/spec-hash';
/** Label holding the signal that asks the container to stop (the image's StopSignal, else SIGTERM). */
export const LABEL_STOP_SIGNAL = 'bronze.dev/stop-signal';
/** Label holding the container's network mode (`host` or `none`): a host-network one binds copies of the node's etc files. */
export const LABEL_NETWORK = 'bronze.dev/network';
/** networkd's output directory on a node (src/networkd/manager.ts). */
export const NODE_ETC_DIR = '/system/etc';
/** Per-container files of the runtime (tmpfs: gone at reboot, as the tasks are). */
export const CONTAINERS_RUN_DIR = '/system/run/containers';
/** The node's files a host-network container sees as its own. */
const HOST_ETC_FILES = ['resolv.conf', 'hosts'];

/** Time a container gets between its stop signal and SIGKILL (Docker's and Talos's default). */
export const DEFAULT_STOP_GRACE_MS = 10_000;

/** Where an image's config and unpacked rootfs come from; by default the image store's imageRunConfig (images.ts). */
export type ImageSource = (namespace: string, ref: string) => Promise<{ config: ImageConfig; chainId: string }>;

/** A task's exit, as the runtime reports it. */
export interface InstanceExit {
  namespace: string;
  id: string;
  pid: number;
  /** The process's exit status (128+n for a signal n); undefined when the task vanished unseen. */
  exitStatus: number | undefined;
  exitedAt: Date;
  /** Whether Bronze stopped it (stop, restart, replace, remove) rather than the process ending. */
  expected: boolean;
}

export interface RuntimeOptions {
  client: ContainerdClient;
  images?: ImageSource;
  /** Namespace of ensureRunning and remove by default. */
  namespace?: string;
  logDir?: string;
  /** Parent cgroup of the containers' own (spec.ts CONTAINERS_CGROUP_PARENT by default). */
  cgroupParent?: string;
  snapshotter?: string;
  stopGraceMs?: number;
  logMaxBytes?: number;
  /** Where networkd writes the node's resolv.conf and hosts (host-network containers get copies). */
  etcDir?: string;
  /** Per-container runtime files (those copies): `<runDir>/<namespace>/<id>/`. */
  runDir?: string;
  /** Go arch of the node for the seccomp profile (default: this process's). */
  arch?: string;
  onExit?: (e: InstanceExit) => void;
}

interface Instance {
  pid: number;
  exited: Promise<TaskExit | undefined>;
  abort: AbortController;
  stopping: boolean;
}

interface ContainerMsg {
  id: string;
  labels: Record<string, string>;
  image: string;
  spec: Any | null;
}

/** A stable hash of a run spec: equal documents give equal hashes whatever their key order. */
export function runSpecHash(run: ContainerRunSpec): string {
  return stableHash(run);
}

/** A signal's number from its name (`SIGTERM`, `TERM`) or number (`15`); SIGTERM when unknown. */
export function signalNumber(s: string | undefined): number {
  if (!s) return os.constants.signals.SIGTERM;
  if (/^\d+$/.test(s)) return Number(s);
  const name = (s.toUpperCase().startsWith('SIG') ? s.toUpperCase() : `SIG${s.toUpperCase()}`) as keyof typeof os.constants.signals;
  return os.constants.signals[name] ?? os.constants.signals.SIGTERM;
}

export class ContainerRuntime implements Pick<WorkloadsApi, 'listContainers' | 'stats' | 'logs' | 'restart'> {
  readonly #c: ContainerdClient;
  readonly #o: Required<Omit<RuntimeOptions, 'onExit' | 'cgroupParent' | 'arch'>> & Pick<RuntimeOptions, 'onExit' | 'cgroupParent' | 'arch'>;
  /** Instances this runtime watches, by `namespace/id`. */
  readonly #instances = new Map<string, Instance>();
  /** One operation at a time per container. */
  readonly #locks = new Map<string, Promise<unknown>>();
  #trimTimer: NodeJS.Timeout | undefined;
  #closed = false;
  /** What machined's own process lets a container have (fixed for its lifetime): read at the first create. */
  #ownLimits: { nofile: { soft: number; hard: number }; bounding: Set<number> | undefined } | undefined;

  constructor(opts: RuntimeOptions) {
    this.#c = opts.client;
    this.#o = {
      namespace: CONTAINERS_NAMESPACE,
      logDir: CONTAINER_LOG_DIR,
      snapshotter: SNAPSHOTTER,
      stopGraceMs: DEFAULT_STOP_GRACE_MS,
      logMaxBytes: LOG_MAX_BYTES,
      etcDir: NODE_ETC_DIR,
      runDir: CONTAINERS_RUN_DIR,
      ...opts,
      images: opts.images ?? ((ns, ref) => imageRunConfig(opts.client, ns, ref)),
    };
    // The shim appends forever; a periodic trim keeps each log bounded (logs.ts trimLog).
    this.#trimTimer = setInterval(() => this.trimLogs(), 60_000);
    this.#trimTimer.unref();
  }

  #lock<T>(ns: string, id: string, fn: () => Promise<T>): Promise<T> {
    const key = `${ns}/${id}`;
    const prev = this.#locks.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.#locks.set(key, tail);
    void tail.then(() => {
      if (this.#locks.get(key) === tail) this.#locks.delete(key);
    });
    return next;
  }

  #logFile(ns: string, id: string): string {
    return containerLogPath(this.#o.logDir, ns, id);
  }

  #runDir(ns: string, id: string): string {
    return path.join(this.#o.runDir, ns, id);
  }

  /**
   * The bind mounts of a host-network container's resolv.conf and hosts: copies of the node's,
   * in the container's run directory (none where the node has no file). Copies, not the files
   * themselves: networkd replaces them by rename, and a bind mount would hold the old inode for good.
   */
  #hostEtcMounts(ns: string, id: string): { destination: string; source: string }[] {
    const dir = this.#runDir(ns, id);
    return HOST_ETC_FILES.filter((f) => fs.existsSync(path.join(this.#o.etcDir, f))).map((f) => ({ destination: `/etc/${f}`, source: path.join(dir, f) }));
  }

  /** Makes the copies #hostEtcMounts names afresh: once per task start of a host-network container. */
  #refreshEtcFiles(ns: string, id: string): void {
    const dir = this.#runDir(ns, id);
    for (const f of HOST_ETC_FILES) {
      const from = path.join(this.#o.etcDir, f);
      if (!fs.existsSync(from)) continue;
      fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
      fs.copyFileSync(from, path.join(dir, f));
      fs.chmodSync(path.join(dir, f), 0o644);
    }
  }

  /** machined's hard RLIMIT_NOFILE and bounding set, read once: containerd and runc inherit them. */
  #own(): { nofile: { soft: number; hard: number }; bounding: Set<number> | undefined } {
    // A hard limit above machined's is refused; so is a capability outside its bounding set.
    return (this.#ownLimits ??= { nofile: nofileWithin(ownNofileHard()), bounding: ownBoundingCaps() });
  }

  async #getContainer(ns: string, id: string): Promise<ContainerMsg | undefined> {
    try {
      return (await this.#c.unary<{ container: ContainerMsg }>(CONTAINERS, 'Get', { id }, ns)).container;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * Makes `run` run: creates what is missing, replaces a container made from another version of
   * the document, starts a new task when none runs. Resolves with the running task's pid.
   */
  ensureRunning(run: ContainerRunSpec, opts: { namespace?: string; hash?: string } = {}): Promise<{ pid: number; created: boolean; started: boolean }> {
    const ns = opts.namespace ?? this.#o.namespace;
    const hash = opts.hash ?? runSpecHash(run);
    return this.#lock(ns, run.name, async () => {
      let existing = await this.#getContainer(ns, run.name);
      let created = false;
      if (existing && existing.labels[LABEL_SPEC_HASH] !== hash) {
        await this.#removeLocked(ns, run.name);
        existing = undefined;
      }
      if (!existing) {
        await this.#createContainer(ns, run, hash);
        created = true;
      }
      const task = await getTask(this.#c, ns, run.name);
      if (task?.status === 'RUNNING' || task?.status === 'PAUSED' || task?.status === 'PAUSING') {
        this.#watch(ns, run.name, task.pid);
        return { pid: task.pid, created, started: false };
      }
      if (task) await this.#deleteTask(ns, run.name);
      try {
        const pid = await this.#startTask(ns, run.name, run.network === 'host');
        return { pid, created, started: true };
      } catch (err) {
        // A container that never ran is not left behind: the next attempt starts clean.
        if (created) await this.#removeLocked(ns, run.name).catch(() => {});
        throw err;
      }
    });
  }

  /** Stops the container's task (stop signal, then SIGKILL after the grace period) and deletes it; the container stays. */
  stop(id: string, namespace = this.#o.namespace): Promise<void> {
    return this.#lock(namespace, id, () => this.#stopLocked(namespace, id));
  }

  /** Stops and deletes task, container and snapshot; resolves with whether there was a container. */
  remove(id: string, namespace = this.#o.namespace): Promise<boolean> {
    return this.#lock(namespace, id, () => this.#removeLocked(namespace, id));
  }

  /** Stops the task and starts a new one (a new instance, same container and rootfs). */
  restart(namespace: string, id: string): Promise<void> {
    return this.#lock(namespace, id, async () => {
      const c = await this.#getContainer(namespace, id);
      if (!c) throw Object.assign(new Error(`container ${namespace}/${id} not found`), { code: 5 });
      await this.#stopLocked(namespace, id);
      await this.#startTask(namespace, id, c.labels[LABEL_NETWORK] === 'host');
    });
  }

  /**
   * Watches the tasks already running in `namespace` (after machined restarted while containerd
   * and the shims kept them running), so that their exits are reported too.
   */
  async adopt(namespace = this.#o.namespace): Promise<string[]> {
    const tasks = await listTasks(this.#c, namespace);
    const ids: string[] = [];
    for (const [id, t] of tasks) {
      if (t.status !== 'RUNNING' && t.status !== 'PAUSED') continue;
      this.#watch(namespace, id, t.pid);
      ids.push(id);
    }
    return ids;
  }

  async listContainers(namespace: string): Promise<InstanceInfo[]> {
    const [{ containers }, tasks] = await Promise.all([this.#c.unary<{ containers: ContainerMsg[] }>(CONTAINERS, 'List', { filters: [] }, namespace), listTasks(this.#c, namespace)]);
    return containers.map((c) => {
      const t = tasks.get(c.id);
      const info: InstanceInfo = {
        id: c.id,
        namespace,
        image: c.image,
        pid: t?.pid ?? 0,
        status: !t ? 'stopped' : t.status === 'RUNNING' ? 'running' : t.status === 'CREATED' ? 'created' : t.status === 'STOPPED' ? 'stopped' : t.status === 'PAUSED' || t.status === 'PAUSING' ? 'paused' : 'unknown',
        cgroup: cgroupOf(c.spec),
        labels: c.labels,
      };
      if (t?.status === 'STOPPED') info.exitStatus = t.exitStatus;
      return info;
    });
  }

  async stats(namespace: string): Promise<InstanceStats[]> {
    const metrics = await taskMetrics(this.#c, namespace);
    const out: InstanceStats[] = [];
    for (const [id, any] of metrics) {
      const fig = decodeCgroupMetrics(any);
      if (fig) out.push({ id, namespace, ...fig });
    }
    return out.sort((a, b) => a.id.localeCompare(b.id));
  }

  async *logs(namespace: string, id: string, opts: { follow: boolean; tailLines: number; signal?: AbortSignal }): AsyncIterable<Uint8Array> {
    const file = this.#logFile(namespace, id);
    if (!fs.existsSync(file) && !(await this.#getContainer(namespace, id))) throw Object.assign(new Error(`container ${namespace}/${id} not found`), { code: 5 });
    yield* readLog(file, opts);
  }

  /** Trims every watched container's log to the configured size. */
  trimLogs(): void {
    for (const key of this.#instances.keys()) {
      const [ns = '', id = ''] = key.split('/');
      try {
        trimLog(this.#logFile(ns, id), this.#o.logMaxBytes);
      } catch {
        // The next round tries again; a log that cannot be trimmed is no reason to stop.
      }
    }
  }

  /** Stops watching (the tasks keep running; containerd owns them). */
  close(): void {
    this.#closed = true;
    clearInterval(this.#trimTimer);
    for (const inst of this.#instances.values()) inst.abort.abort();
    this.#instances.clear();
  }

  async #createContainer(ns: string, run: ContainerRunSpec, hash: string): Promise<void> {
    const { config, chainId } = await this.#o.images(ns, run.image);
    const hostEtcFiles = run.network === 'host' ? this.#hostEtcMounts(ns, run.name) : [];
    const own = this.#own();
    const spec = buildSpec(run, config, {
      hostEtcFiles,
      namespace: ns,
      kernel: os.release(),
      nofile: own.nofile,
      ...(own.bounding ? { bounding: own.bounding } : {}),
      ...(this.#o.cgroupParent ? { cgroupParent: this.#o.cgroupParent } : {}),
      ...(this.#o.arch ? { arch: this.#o.arch } : {}),
      ...(run.profile === 'privileged' ? { hostDevices: readHostDevices() } : {}),
    });
    const snap = { snapshotter: this.#o.snapshotter, key: run.name };
    // The gc.root label keeps the snapshot from containerd's garbage collector between Prepare and
    // the container that references it; remove() deletes the snapshot explicitly.
    const prepare = () => this.#c.unary(SNAPSHOTS, 'Prepare', { ...snap, parent: chainId, labels: { 'containerd.io/gc.root': new Date().toISOString() } }, ns);
    try {
      await prepare();
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      // Left by a create that died half way: nothing uses it without its container.
      await this.#removeSnapshot(ns, run.name);
      await prepare();
    }
    try {
      await this.#c.unary(
        CONTAINERS,
        'Create',
        {
          container: {
            id: run.name,
            labels: { [LABEL_SPEC_HASH]: hash, [LABEL_STOP_SIGNAL]: String(signalNumber(config.StopSignal)), [LABEL_NETWORK]: run.network },
            image: run.image,
            runtime: { name: RUNC_RUNTIME },
            spec: jsonAny(RUNTIME_SPEC_TYPE_URL, spec),
            snapshotter: this.#o.snapshotter,
            snapshot_key: run.name,
          },
        },
        ns,
      );
    } catch (err) {
      await this.#removeSnapshot(ns, run.name).catch(() => {});
      throw err;
    }
  }

  async #startTask(ns: string, id: string, hostNetwork: boolean): Promise<number> {
    const { mounts } = await this.#c.unary<{ mounts: Mount[] }>(SNAPSHOTS, 'Mounts', { snapshotter: this.#o.snapshotter, key: id }, ns);
    const file = this.#logFile(ns, id);
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o750 });
    // Fresh copies for each instance (and again after a reboot emptied the tmpfs they live on);
    // only a host-network container's spec binds them.
    if (hostNetwork) this.#refreshEtcFiles(ns, id);
    const pid = await createTask(this.#c, ns, id, mounts, logURI(file));
    // Wait before Start, so that an exit right after start is not missed.
    this.#watch(ns, id, pid);
    try {
      await startTask(this.#c, ns, id);
    } catch (err) {
      const inst = this.#instances.get(`${ns}/${id}`);
      if (inst) inst.stopping = true;
      await this.#deleteTask(ns, id).catch(() => {});
      throw err;
    }
    return pid;
  }

  /** Reports the task's exit (once) through onExit; a Wait cut by a containerd restart is made again. */
  #watch(ns: string, id: string, pid: number): void {
    const key = `${ns}/${id}`;
    const cur = this.#instances.get(key);
    if (cur && cur.pid === pid) return;
    cur?.abort.abort();
    const abort = new AbortController();
    const inst: Instance = { pid, abort, stopping: false, exited: Promise.resolve(undefined) };
    inst.exited = (async (): Promise<TaskExit | undefined> => {
      for (;;) {
        try {
          return await waitTask(this.#c, ns, id, abort.signal);
        } catch (err) {
          if (abort.signal.aborted || this.#closed) return undefined;
          if (isNotFound(err)) return undefined;
          await sleep(1000, abort.signal);
        }
      }
    })();
    this.#instances.set(key, inst);
    void inst.exited.then((exit) => {
      if (abort.signal.aborted) return;
      if (this.#instances.get(key) === inst) this.#instances.delete(key);
      this.#o.onExit?.({ namespace: ns, id, pid, exitStatus: exit?.exitStatus, exitedAt: exit?.exitedAt ?? new Date(), expected: inst.stopping });
    });
  }

  async #stopLocked(ns: string, id: string): Promise<void> {
    const task = await getTask(this.#c, ns, id);
    if (!task) return;
    if (task.status === 'RUNNING' || task.status === 'PAUSED' || task.status === 'PAUSING' || task.status === 'CREATED') {
      this.#watch(ns, id, task.pid);
      const inst = this.#instances.get(`${ns}/${id}`)!;
      inst.stopping = true;
      const c = await this.#getContainer(ns, id);
      await stopTask(this.#c, ns, id, inst.exited, { stopSignal: signalNumber(c?.labels[LABEL_STOP_SIGNAL]), graceMs: this.#o.stopGraceMs });
    }
    await this.#deleteTask(ns, id);
  }

  async #deleteTask(ns: string, id: string): Promise<void> {
    await deleteTask(this.#c, ns, id);
  }

  async #removeSnapshot(ns: string, key: string): Promise<void> {
    try {
      await this.#c.unary(SNAPSHOTS, 'Remove', { snapshotter: this.#o.snapshotter, key }, ns);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async #removeLocked(ns: string, id: string): Promise<boolean> {
    await this.#stopLocked(ns, id);
    let existed = true;
    try {
      await this.#c.unary(CONTAINERS, 'Delete', { id }, ns);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      existed = false;
    }
    await this.#removeSnapshot(ns, id);
    fs.rmSync(this.#runDir(ns, id), { recursive: true, force: true });
    return existed;
  }
}

/** The cgroup path in a container's spec Any (`/containers/web`), '' when unreadable. */
function cgroupOf(spec: Any | null): string {
  if (!spec) return '';
  try {
    const s = JSON.parse(Buffer.from(spec.value).toString('utf8')) as { linux?: { cgroupsPath?: string } };
    return s.linux?.cgroupsPath ?? '';
  } catch {
    return '';
  }
}
