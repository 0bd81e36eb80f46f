// The node's workloads as machined holds them: a connection to containerd once its service is
// up (the API's WorkloadsApi and the engine's RuntimePort, src/machined/workloads/
// containerd-workloads.ts), the exits containerd reports handed to the engine, and what the
// tried slot's commit needs: whether every declared container runs and is healthy (holdCommit),
// a call when that becomes so (the commit may go ahead), and a container that failed for good
// during a trial (the trial is given up: lifecycle.abandonTrial).
import type { Logger } from '../../lib/log.ts';
import type { RegistryConfig, WorkloadsApi } from '../../containerd/types.ts';
import type { ServiceEvent, ServiceInfo } from '../supervisor/types.ts';
import { ContainerdWorkloads } from './containerd-workloads.ts';
import type { RuntimePort, WorkloadEngine } from './engine.ts';

export interface NodeWorkloadsOptions {
  log: Logger;
  /** containerd's socket (the node's, or a host run's). */
  socket: string;
  /** Every declared container now runs and is healthy (after it was not). */
  onSettled?: () => void;
  /** A declared container failed for good (start failed, or unhealthy past its threshold). */
  onFailure?: (why: string) => void;
}

export interface ServiceEvents {
  on(event: 'event', fn: (id: string, ev: ServiceEvent) => void): unknown;
  list(): ServiceInfo[];
}

export class NodeWorkloads {
  readonly #o: NodeWorkloadsOptions;
  #runtime: ContainerdWorkloads | undefined;
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
        this.#runtime = new ContainerdWorkloads({
          socket: this.#o.socket,
          registries: () => this.#registries,
          restartDeclared: async (id) => !!(await this.#engine?.restart(id)),
          onExit: (e) => {
            if (!e.expected && e.namespace === 'taloscontainers') this.#engine?.exited(e.id, e.exitStatus ?? -1, e.pid);
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
