// The service supervisor of machined (PID 1).
//
// It starts the daemons in dependency order (a service waits until every dependency is Running
// and healthy), restarts them per their policy with exponential backoff, polls their health,
// captures their output line by line, and stops them in reverse dependency order (SIGTERM, then
// SIGKILL after a timeout). This file holds the Supervisor itself: the services' state, start
// and stop requests, the scheduling of starts, and the events it publishes. Its parts: types.ts
// (the public types), graph.ts (dependency order), pre-start.ts (condition and prepare step),
// process.ts (the process runner), restart.ts (restart policy and backoff), health.ts (health
// checks), output.ts (captured output), service.ts (the record kept per service).
//
// machined also runs a zombie reaper. The supervisor never calls waitpid: libuv waits for the
// children it spawned and reports them through the ChildProcess 'exit' event; pids() tells the
// reaper which pids to leave alone.
//
// As in Talos, a dependency counts as "up" when it is Running and healthy, Skipped, or Finished
// on its own (a one-shot that exited 0); a dependency that fails later does not stop its
// dependents.

import { EventEmitter } from 'node:events';
import { checkStopOrder, startLevels, stoppedBefore } from './graph.ts';
import { pollHealth, type HealthLimits } from './health.ts';
import { keepLine } from './output.ts';
import { checkCondition, prepare } from './pre-start.ts';
import { endRun, startProcess, terminate } from './process.ts';
import { afterExit, type Backoff } from './restart.ts';
import { errorMessage, info, isPending, newService, pushBounded, type Exit, type Service, type SupervisorHooks } from './service.ts';
import type { AdoptedProcess, ServiceEvent, ServiceInfo, ServiceSpec, ServiceState, SupervisorOptions } from './types.ts';

const MAX_EVENTS = 100;

export class Supervisor extends EventEmitter {
  readonly #services = new Map<string, Service>();
  readonly #backoff: Backoff;
  readonly #logLines: number;
  readonly #log: ((msg: string) => void) | undefined;
  readonly #adopt: Map<string, AdoptedProcess>;
  readonly #health: HealthLimits;
  readonly #placement: SupervisorOptions['placement'];
  readonly #hooks: SupervisorHooks = {
    record: (svc, state, message) => this.#record(svc, state, message),
    schedule: () => this.#schedule(),
    exited: (svc, exit) => this.#exited(svc, exit),
    line: (svc, raw) => keepLine(svc, raw, this.#logLines, this.#log),
    started: (svc, run) => pollHealth(svc, run, this.#health, this.#hooks),
    spawn: (svc, prepared) => this.#spawn(svc, prepared),
    place: (svc, pid) => {
      try {
        this.#placement?.(pid, svc.spec.id);
      } catch (err) {
        this.#log?.(`supervisor: placing ${svc.spec.id} (pid ${pid}): ${errorMessage(err)}`);
      }
    },
  };
  #scheduling = false;
  #rescan = false;

  constructor(specs: ServiceSpec[], opts: SupervisorOptions = {}) {
    super();
    startLevels(specs); // validates ids, dependencies and cycles
    checkStopOrder(specs); // the stop order: after dependents and after stopAfter
    for (const spec of specs) {
      if (typeof spec.command !== 'string' || spec.command === '') throw new Error(`service ${spec.id} has no command`);
    }
    this.#backoff = { base: opts.backoffBase ?? 1000, max: opts.backoffMax ?? 30_000, stableAfter: opts.stableAfter ?? 30_000 };
    this.#logLines = opts.logLines ?? 1000;
    this.#log = opts.log;
    this.#adopt = new Map(opts.adopt ?? []);
    this.#placement = opts.placement;
    for (const id of this.#adopt.keys()) if (!specs.some((s) => s.id === id)) throw new Error(`adopted process of unknown service ${id}`);
    this.#health = {
      failures: Math.max(1, opts.healthFailures ?? 3),
      backoffMax: opts.healthBackoffMax ?? 30_000,
      timeoutMax: opts.healthTimeoutMax ?? 10_000,
    };
    // Stopped before each one: its dependents, and what it must outlive.
    for (const spec of specs) this.#services.set(spec.id, newService(spec, [...new Set(stoppedBefore(specs, spec))]));
  }

  /** Starts every service that is not already started; each waits for its dependencies. */
  start(): void {
    for (const svc of this.#services.values()) {
      if (svc.wanted || svc.run) continue;
      this.#want(svc);
    }
    this.#schedule();
  }

  /** Stops every service, each one only after all the services that depend on it. */
  async stop(): Promise<void> {
    // First make sure nothing starts or restarts while the others are being stopped.
    for (const svc of this.#services.values()) this.#unwant(svc);
    const stopping = new Map<string, Promise<void>>();
    const stopAfterDependents = (id: string): Promise<void> => {
      let done = stopping.get(id);
      if (!done) {
        const dependents = this.#must(id).dependents;
        done = Promise.all(dependents.map(stopAfterDependents)).then(() => this.stopService(id));
        stopping.set(id, done);
      }
      return done;
    };
    await Promise.all([...this.#services.keys()].map(stopAfterDependents));
  }

  /**
   * Starts one service (its dependencies are not started for it). Resolves once it is Running,
   * Skipped, Finished or Failed, or when it is stopped meanwhile; while a dependency is down it
   * stays pending.
   */
  async startService(id: string): Promise<void> {
    const svc = this.#must(id);
    while (svc.run?.stopping) await svc.run.exited;
    if (svc.run) {
      svc.wanted = true; // still running (e.g. stop() has not reached it yet): keep it
      return;
    }
    const settled = new Promise<void>((resolve) => svc.settled.push(resolve));
    if (!svc.wanted) {
      this.#want(svc);
      this.#schedule();
    }
    if (!isPending(svc.state)) this.#settle(svc);
    await settled;
  }

  /** Stops one service (not its dependents): SIGTERM, then SIGKILL after stopTimeout. */
  async stopService(id: string): Promise<void> {
    const svc = this.#must(id);
    this.#unwant(svc);
    const run = svc.run;
    if (!run) {
      if (isPending(svc.state)) this.#record(svc, 'Finished', 'Stopped before it started');
      this.#settle(svc);
      return;
    }
    if (!run.stopping) {
      terminate(svc, run, this.#hooks);
      this.#schedule(); // a stopping service no longer counts as up
    }
    await run.exited;
  }

  async restartService(id: string): Promise<void> {
    await this.stopService(id);
    await this.startService(id);
  }

  /**
   * Changes a service's environment (the whole of it, as in ServiceSpec.env). A running
   * service restarts to take it; returns whether it did.
   */
  async setServiceEnv(id: string, env: Record<string, string>): Promise<boolean> {
    const svc = this.#services.get(id);
    if (!svc) throw new Error(`unknown service: ${id}`);
    if (JSON.stringify(svc.spec.env ?? null) === JSON.stringify(env)) return false;
    svc.spec = { ...svc.spec, env };
    if (svc.state !== 'Running') return false;
    await this.restartService(id);
    return true;
  }

  list(): ServiceInfo[] {
    return [...this.#services.values()].map(info);
  }

  get(id: string): ServiceInfo | undefined {
    const svc = this.#services.get(id);
    return svc && info(svc);
  }

  /** The last `logLines` lines of stdout and stderr, in the order they arrived. */
  logs(id: string): string[] {
    return [...this.#must(id).logs];
  }

  /** Calls onLine for every line captured from now on; returns the unsubscribe function. */
  followLogs(id: string, onLine: (line: string) => void): () => void {
    const followers = this.#must(id).followers;
    followers.add(onLine);
    return () => {
      followers.delete(onLine);
    };
  }

  /** Pids of the supervised children whose exit has not been observed yet. */
  pids(): Set<number> {
    const pids = new Set<number>();
    for (const svc of this.#services.values()) if (svc.run) pids.add(svc.run.pid);
    for (const { child } of this.#adopt.values()) if (child.pid !== undefined) pids.add(child.pid);
    return pids;
  }

  // --- starting ---

  #want(svc: Service): void {
    svc.wanted = true;
    svc.gen++;
    svc.attempt = 0;
    svc.completed = false;
    const { condition } = svc.spec;
    if (!condition) {
      svc.pendingStart = true;
      this.#record(svc, 'Waiting', this.#waitMessage(svc));
      return;
    }
    checkCondition(svc, condition, this.#hooks);
  }

  /** Spawns every pending service whose dependencies are up, until nothing changes. */
  #schedule(): void {
    if (this.#scheduling) {
      this.#rescan = true;
      return;
    }
    this.#scheduling = true;
    try {
      do {
        this.#rescan = false;
        for (const svc of this.#services.values()) {
          if (!svc.pendingStart || svc.run || svc.preparing) continue;
          if (svc.spec.dependsOn.every((dep) => this.#isUp(dep))) {
            if (svc.spec.prepare && !this.#adopt.has(svc.spec.id)) prepare(svc, this.#hooks);
            else this.#spawn(svc);
            this.#rescan = true;
          } else {
            const message = this.#waitMessage(svc);
            if (svc.state !== 'Waiting' || svc.events.at(-1)?.message !== message) this.#record(svc, 'Waiting', message);
          }
        }
      } while (this.#rescan);
    } finally {
      this.#scheduling = false;
    }
  }

  #isUp(id: string): boolean {
    const dep = this.#must(id);
    if (dep.state === 'Skipped' || (dep.state === 'Finished' && dep.completed)) return true;
    return (
      dep.state === 'Running' &&
      dep.run !== undefined &&
      !dep.run.stopping &&
      (dep.spec.healthCheck === undefined || dep.healthy === true)
    );
  }

  #waitMessage(svc: Service): string {
    const down = svc.spec.dependsOn.filter((dep) => !this.#isUp(dep));
    return down.length > 0 ? `Waiting for ${down.join(', ')}` : 'Dependencies are up';
  }

  #spawn(svc: Service, prepared?: { args?: string[]; env?: Record<string, string> }): void {
    svc.pendingStart = false;
    const early = this.#adopt.get(svc.spec.id);
    this.#adopt.delete(svc.spec.id);
    startProcess(svc, prepared, early, this.#hooks);
  }

  // --- exits and restarts ---

  #exited(svc: Service, exit: Exit): void {
    const run = endRun(svc);
    svc.healthy = undefined;
    afterExit(svc, run, exit, this.#backoff, this.#hooks);
    this.#schedule();
  }

  #unwant(svc: Service): void {
    svc.wanted = false;
    svc.gen++;
    svc.pendingStart = false;
    svc.preparing?.abort();
    svc.preparing = undefined;
    clearTimeout(svc.restartTimer);
    svc.restartTimer = undefined;
  }

  // --- state and events ---

  #record(svc: Service, state: ServiceState, message: string): void {
    svc.state = state;
    const ev: ServiceEvent = { ts: new Date(), state, message };
    pushBounded(svc.events, ev, MAX_EVENTS);
    if (!isPending(state)) this.#settle(svc);
    try {
      this.emit('event', svc.spec.id, ev);
    } catch (err) {
      this.#log?.(`supervisor: an 'event' listener threw: ${errorMessage(err)}`);
    }
  }

  #settle(svc: Service): void {
    for (const resolve of svc.settled.splice(0)) resolve();
  }

  #must(id: string): Service {
    const svc = this.#services.get(id);
    if (!svc) throw new Error(`unknown service: ${id}`);
    return svc;
  }
}
