// The node's workloads as machined holds them: a connection to containerd once its service is
// up (the API's WorkloadsApi and the engine's RuntimePort, src/machined/workloads/
// containerd-workloads.ts), the exits containerd reports handed to the engine, and what the
// tried slot's commit needs: whether every declared container runs and is healthy (holdCommit),
// a call when that becomes so (the commit may go ahead), and a container that failed for good
// during a trial (the trial is given up: lifecycle.abandonTrial). At shutdown, before containerd
// stops, it stops the operator's containers each with its stop signal and grace period (stopAll).
import { sleep } from '../../lib/sleep.ts';
import type { Logger } from '../../lib/log.ts';
import { type ContainerRuntime, DEFAULT_STOP_GRACE_MS } from '../../containerd/runtime.ts';
import { CONTAINERS_NAMESPACE, type RegistryConfig, type WorkloadsApi } from '../../containerd/types.ts';
import type { ServiceEvent, ServiceInfo } from '../supervisor/types.ts';
import { ContainerdWorkloads, type ContainerdWorkloadsOptions } from './containerd-workloads.ts';
import type { RuntimePort, WorkloadEngine } from './engine.ts';

/** What NodeWorkloads uses of its connection to containerd (ContainerdWorkloads; a fake in tests). */
export type WorkloadsConnection = WorkloadsApi & Pick<ContainerdWorkloads, 'port' | 'close'> & { runtime: Pick<ContainerRuntime, 'listContainers' | 'stop'> };

/** How long stopAll waits beyond the containers' grace period (the runtime's Kill, Wait and Delete calls). */
export const STOP_ALL_MARGIN_MS = 5_000;

export interface NodeWorkloadsOptions {
  log: Logger;
  /** containerd's socket (the node's, or a host run's). */
  socket: string;
  /** Every declared container now runs and is healthy (after it was not). */
  onSettled?: () => void;
  /** A declared container failed for good (start failed, or unhealthy past its threshold). */
  onFailure?: (why: string) => void;
  /** Makes the connection once containerd is up (default: a ContainerdWorkloads on `socket`). */
  connect?: (o: ContainerdWorkloadsOptions) => WorkloadsConnection;
}

export interface ServiceEvents {
  on(event: 'event', fn: (id: string, ev: ServiceEvent) => void): unknown;
  list(): ServiceInfo[];
}

export class NodeWorkloads {
  readonly #o: NodeWorkloadsOptions;
  #runtime: WorkloadsConnection | undefined;
  #engine: WorkloadEngine | undefined;
  #declared = 0;
  #registries: RegistryConfig = {};

  constructor(o: NodeWorkloadsOptions) {
    this.#o = o;
  }

  /** Connects once containerd is Running and healthy; drops the connection when it stops. */
  follow(services: ServiceEvents): void {
    const check = () => {
      const info = services.list().find((s) => s.id === 'containerd');
      const up = info?.state === 'Running' && info.healthy === true;
      if (up && !this.#runtime) {
        this.#runtime = (this.#o.connect ?? ((o) => new ContainerdWorkloads(o)))({
          socket: this.#o.socket,
          registries: () => this.#registries,
          restartDeclared: async (id) => !!(await this.#engine?.restart(id)),
          onExit: (e) => {
            if (!e.expected && e.namespace === CONTAINERS_NAMESPACE) this.#engine?.exited(e.id, e.exitStatus ?? -1, e.pid);
          },
        });
        this.#o.log.info('containers: containerd is up');
        void this.#engine?.reconcile();
      } else if (!up && this.#runtime && info?.state !== 'Running') {
        this.#runtime.close();
        this.#runtime = undefined;
      }
    };
    services.on('event', (id) => {
      if (id === 'containerd') check();
    });
    check();
  }

  /**
   * The API's view (images, containers, logs): undefined until containerd answers. A Restart of a
   * declared container goes through the engine, which keeps its status (pid, starts, probe).
   */
  api(): WorkloadsApi | undefined {
    return this.#runtime;
  }

  /** The engine's view of the runtime: undefined until containerd answers. */
  port(): RuntimePort | undefined {
    return this.#runtime?.port;
  }

  /** The engine the container controller made. */
  engine(e: WorkloadEngine): void {
    this.#engine = e;
    e.onFailure = (why) => this.#o.onFailure?.(why);
  }

  /**
   * Stops every container of the operator's namespace, in parallel, each through the runtime's
   * stop (its stop signal, SIGKILL after the grace period), with the engine stopped first so that
   * nothing starts one again. Machined's shutdown calls it before containerd stops: the shims and
   * containers outlive containerd, and what is left then is only killed with its cgroup. Never
   * waits longer than `timeoutMs`; does nothing while containerd is not up.
   */
  async stopAll(timeoutMs = DEFAULT_STOP_GRACE_MS + STOP_ALL_MARGIN_MS): Promise<void> {
    this.#engine?.stop();
    const conn = this.#runtime;
    if (!conn) return;
    const { log } = this.#o;
    const pending = new Set<string>();
    const work = (async () => {
      const list = await conn.runtime.listContainers(CONTAINERS_NAMESPACE);
      const ids = list.filter((c) => c.status !== 'stopped').map((c) => c.id);
      if (ids.length) log.info(`containers: stopping ${ids.join(', ')}`);
      await Promise.all(
        ids.map(async (id) => {
          pending.add(id);
          try {
            await conn.runtime.stop(id, CONTAINERS_NAMESPACE);
          } catch (err) {
            log.warn(`container ${id}: stop: ${(err as Error).message}`);
          } finally {
            pending.delete(id);
          }
        }),
      );
    })().then(
      () => true,
      (err: Error) => (log.warn(`containers: stopping: ${err.message}`), true),
    );
    const timer = new AbortController();
    const done = await Promise.race([work, sleep(timeoutMs, timer.signal).then(() => false)]);
    timer.abort();
    if (!done) log.warn(`containers: not stopped within ${timeoutMs} ms${pending.size ? ` (${[...pending].join(', ')})` : ''}; what is left is killed with its cgroup`);
  }

  settled(ok: boolean): void {
    if (ok) this.#o.onSettled?.();
  }

  /** What the configuration declares now: how many containers, and the registry settings. */
  config(declared: number, registries: RegistryConfig): void {
    this.#declared = declared;
    this.#registries = registries;
  }

  /** Why a tried slot must wait before it is committed, or undefined. */
  holdCommit(): string | undefined {
    if (this.#declared === 0) return undefined;
    const s = this.#engine?.settled();
    if (!s) return `${this.#declared} declared container(s) wait for containerd`;
    if (s.ok) return undefined;
    return `declared containers are not all running and healthy yet (${s.waiting.join('; ')})`;
  }
}
