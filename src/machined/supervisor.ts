// The service supervisor of machined (PID 1).
//
// It starts the daemons in dependency order (a service waits until every dependency is Running
// and healthy), restarts them per their policy with exponential backoff, polls their health,
// captures their output line by line, and stops them in reverse dependency order (SIGTERM, then
// SIGKILL after a timeout).
//
// machined also runs a zombie reaper. The supervisor never calls waitpid: libuv waits for the
// children it spawned and reports them through the ChildProcess 'exit' event; pids() tells the
// reaper which pids to leave alone.
//
// Health checks back off instead of flapping: a service that has passed its first check turns
// unhealthy only after several failed checks in a row (one slow answer on a loaded or
// memory-starved machine is not a failure of the service), and after each failure the next
// check comes later and may take longer (up to a cap), so that checking adds no load when the
// machine has none to spare. A success brings back the normal interval.
//
// States follow Talos: Waiting → Preparing → Running, then Finished / Failed, or Skipped when a
// condition is false. As in Talos, a dependency counts as "up" when it is Running and healthy,
// Skipped, or Finished on its own (a one-shot that exited 0); a dependency that fails later does
// not stop its dependents.

import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';

export type ServiceState = 'Waiting' | 'Preparing' | 'Running' | 'Finished' | 'Failed' | 'Skipped';

export interface ServiceEvent {
  ts: Date;
  state: ServiceState;
  message: string;
}

export interface ServiceSpec {
  id: string;
  /** Ids that must be up (Running and healthy, Skipped, or Finished) before this one starts. */
  dependsOn: string[];
  /**
   * Ids that must have stopped before this one is stopped, without waiting for them at start
   * (networkd outlives apid at shutdown: apid's last replies leave through the network).
   */
  stopAfter?: string[];
  /** Executable path. */
  command: string;
  args?: string[];
  /** Passed as spawn's argv0 (the multi-call binary picks its role from it). */
  argv0?: string;
  /** The child's whole environment; when absent the child inherits machined's. */
  env?: Record<string, string>;
  /** Rejects when unhealthy; polled every healthInterval while the process runs. */
  healthCheck?: () => Promise<void>;
  /** ms, default 1000. */
  healthInterval?: number;
  /** ms between SIGTERM and SIGKILL, default 10000. */
  stopTimeout?: number;
  /** Default 'always'. */
  restart?: 'always' | 'on-failure' | 'never';
  /** false → Skipped (e.g. trustd only on control planes). Evaluated on every start request. */
  condition?: () => boolean | Promise<boolean>;
}

export interface ServiceInfo {
  id: string;
  state: ServiceState;
  pid?: number;
  /** Result of the last health check of the current process; undefined before the first one
   *  and for services without a health check. */
  healthy?: boolean;
  lastHealthMessage?: string;
  /** Automatic restarts after the process exited (manual restarts are not counted). */
  restarts: number;
  events: ServiceEvent[];
}

/** A process started for a service before the supervisor, and its output. */
export interface AdoptedProcess {
  child: ChildProcess;
  stdout: Readable;
  stderr: Readable;
}

export interface SupervisorOptions {
  /** First restart delay in ms, doubled on every consecutive restart. Default 1000. */
  backoffBase?: number;
  /** Upper bound of the restart delay in ms. Default 30000. */
  backoffMax?: number;
  /** Lines of output kept per service. Default 1000. */
  logLines?: number;
  /** A process that stayed up this long (ms) restarts with the base delay again. Default 30000. */
  stableAfter?: number;
  /** Receives every captured line, prefixed with "<id>: ". */
  log?: (msg: string) => void;
  /**
   * Processes already started for some services (machined's first moments as PID 1, see
   * early.ts), with stdout and stderr piped: each becomes its service's first run instead of a
   * spawn. Until then they count among pids(), so that the reaper leaves them alone.
   */
  adopt?: ReadonlyMap<string, AdoptedProcess>;
  /** Failed health checks in a row that make a service that has passed one unhealthy. Default 3. */
  healthFailures?: number;
  /** Upper bound (ms) of the delay between checks of a failing service, and of one check's time. Default 30000 and 10000. */
  healthBackoffMax?: number;
  healthTimeoutMax?: number;
}

const DEFAULT_HEALTH_INTERVAL = 1000;
const DEFAULT_STOP_TIMEOUT = 10_000;
/** Health polling interval while a freshly started process has not yet passed a check. */
const STARTUP_HEALTH_INTERVAL = 200;

/** What a service's health says until its first check has passed: it is starting, not failing. */
export const STARTING_HEALTH_MESSAGE = 'Waiting for its socket (starting)';

/** A health check that has not settled after max(healthInterval, this) counts as failed. */
const MIN_HEALTH_TIMEOUT = 1000;
const MAX_EVENTS = 100;
/** Output without a newline is cut into lines of at most this many characters. */
const MAX_LINE = 16 * 1024;

// ---------------------------------------------------------------------------------------------
// The dependency graph (pure functions).

type GraphSpec = Pick<ServiceSpec, 'id' | 'dependsOn'>;

/**
 * Groups the services into levels: level 0 has no dependencies, and every service of level n
 * depends only on services of lower levels. Within a level the input order is kept.
 * Throws an Error naming the services involved on a duplicate id, an unknown dependency or a
 * dependency cycle.
 */
export function startLevels(specs: readonly GraphSpec[]): string[][] {
  const byId = new Map<string, GraphSpec>();
  for (const spec of specs) {
    if (!spec.id) throw new Error('service with an empty id');
    if (byId.has(spec.id)) throw new Error(`duplicate service id: ${spec.id}`);
    byId.set(spec.id, spec);
  }
  for (const spec of specs) {
    for (const dep of spec.dependsOn) {
      if (!byId.has(dep)) throw new Error(`service ${spec.id} depends on unknown service ${dep}`);
    }
  }

  const level = new Map<string, number>();
  const visit = (id: string, path: string[]): number => {
    const known = level.get(id);
    if (known !== undefined) return known;
    const at = path.indexOf(id);
    if (at !== -1) throw new Error(`dependency cycle: ${[...path.slice(at), id].join(' → ')}`);
    const deps = byId.get(id)?.dependsOn ?? [];
    const mine = 1 + Math.max(-1, ...deps.map((dep) => visit(dep, [...path, id])));
    level.set(id, mine);
    return mine;
  };

  const levels: string[][] = [];
  for (const spec of specs) (levels[visit(spec.id, [])] ??= []).push(spec.id);
  return levels;
}

/** The order of an orderly shutdown: every service comes after all services depending on it. */
export function stopOrder(specs: readonly GraphSpec[]): string[] {
  return startLevels(specs).reverse().flat();
}

// ---------------------------------------------------------------------------------------------
// The supervisor.

type Exit = { code: number | null; signal: NodeJS.Signals | null } | { error: Error };

/** One spawned process of a service. */
interface Run {
  child: ChildProcess;
  pid: number;
  startedAt: number;
  stopping: boolean;
  healthTimer?: NodeJS.Timeout;
  killTimer?: NodeJS.Timeout;
  exited: Promise<void>;
  resolveExited: () => void;
}

interface Service {
  spec: ServiceSpec;
  dependents: string[];
  state: ServiceState;
  events: ServiceEvent[];
  logs: string[];
  followers: Set<(line: string) => void>;
  restarts: number;
  healthy?: boolean;
  lastHealthMessage?: string;
  /** The supervisor keeps it running; false once stopped, finished, failed or skipped. */
  wanted: boolean;
  /** Bumped by every start and stop request, so that stale async work can tell. */
  gen: number;
  /** The condition passed; it spawns as soon as its dependencies are up. */
  pendingStart: boolean;
  /** Exited 0 on its own and will not restart: counts as up for its dependents. */
  completed: boolean;
  /** Consecutive restarts: the exponent of the backoff. */
  attempt: number;
  run?: Run;
  restartTimer?: NodeJS.Timeout;
  /** startService callers waiting for the service to leave Waiting/Preparing. */
  settled: Array<() => void>;
}

export class Supervisor extends EventEmitter {
  readonly #services = new Map<string, Service>();
  readonly #backoffBase: number;
  readonly #backoffMax: number;
  readonly #logLines: number;
  readonly #stableAfter: number;
  readonly #log: ((msg: string) => void) | undefined;
  readonly #adopt: Map<string, AdoptedProcess>;
  readonly #healthFailures: number;
  readonly #healthBackoffMax: number;
  readonly #healthTimeoutMax: number;
  #scheduling = false;
  #rescan = false;

  constructor(specs: ServiceSpec[], opts: SupervisorOptions = {}) {
    super();
    startLevels(specs); // validates ids, dependencies and cycles
    // The stop order: after dependents and after stopAfter; no unknown id, no cycle.
    const stopFirst = (spec: ServiceSpec) => [...specs.filter((o) => o.dependsOn.includes(spec.id)).map((o) => o.id), ...(spec.stopAfter ?? [])];
    for (const spec of specs) for (const id of spec.stopAfter ?? []) if (!specs.some((o) => o.id === id)) throw new Error(`service ${spec.id} stops after unknown service ${id}`);
    startLevels(specs.map((spec) => ({ id: spec.id, dependsOn: stopFirst(spec) })));
    for (const spec of specs) {
      if (typeof spec.command !== 'string' || spec.command === '') throw new Error(`service ${spec.id} has no command`);
    }
    this.#backoffBase = opts.backoffBase ?? 1000;
    this.#backoffMax = opts.backoffMax ?? 30_000;
    this.#logLines = opts.logLines ?? 1000;
    this.#stableAfter = opts.stableAfter ?? 30_000;
    this.#log = opts.log;
    this.#adopt = new Map(opts.adopt ?? []);
    for (const id of this.#adopt.keys()) if (!specs.some((s) => s.id === id)) throw new Error(`adopted process of unknown service ${id}`);
    this.#healthFailures = Math.max(1, opts.healthFailures ?? 3);
    this.#healthBackoffMax = opts.healthBackoffMax ?? 30_000;
    this.#healthTimeoutMax = opts.healthTimeoutMax ?? 10_000;
    for (const spec of specs) {
      this.#services.set(spec.id, {
        spec,
        // Stopped before this one: its dependents, and what it must outlive.
        dependents: [...new Set([...specs.filter((other) => other.dependsOn.includes(spec.id)).map((other) => other.id), ...(spec.stopAfter ?? [])])],
        state: 'Waiting',
        events: [],
        logs: [],
        followers: new Set(),
        restarts: 0,
        wanted: false,
        gen: 0,
        pendingStart: false,
        completed: false,
        attempt: 0,
        settled: [],
      });
    }
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
      run.stopping = true;
      const timeout = svc.spec.stopTimeout ?? DEFAULT_STOP_TIMEOUT;
      this.#record(svc, svc.state, `Stopping: sent SIGTERM to pid ${run.pid}`);
      run.child.kill('SIGTERM');
      run.killTimer = setTimeout(() => {
        this.#record(svc, svc.state, `Still running ${timeout}ms after SIGTERM: sent SIGKILL`);
        run.child.kill('SIGKILL');
      }, timeout);
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
    this.#record(svc, 'Waiting', 'Checking condition');
    const gen = svc.gen;
    void (async () => {
      let ok: boolean;
      try {
        ok = await condition();
      } catch (err) {
        if (svc.gen !== gen) return;
        svc.wanted = false;
        this.#record(svc, 'Failed', `Condition failed: ${errorMessage(err)}`);
        return;
      }
      if (svc.gen !== gen) return;
      if (ok) {
        svc.pendingStart = true;
      } else {
        svc.wanted = false;
        this.#record(svc, 'Skipped', 'Condition not met');
      }
      this.#schedule();
    })();
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
          if (!svc.pendingStart || svc.run) continue;
          if (svc.spec.dependsOn.every((dep) => this.#isUp(dep))) {
            this.#spawn(svc);
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

  #spawn(svc: Service): void {
    svc.pendingStart = false;
    const { command, args = [], argv0, env } = svc.spec;
    const early = this.#adopt.get(svc.spec.id);
    this.#adopt.delete(svc.spec.id);
    let child: ChildProcess;
    let stdout: Readable | null;
    let stderr: Readable | null;
    if (early) {
      this.#record(svc, 'Preparing', `Taking over ${command} (pid ${early.child.pid}), started before the supervisor`);
      ({ child, stdout, stderr } = early);
      if (child.exitCode !== null || child.signalCode !== null) {
        // It ended before it could be taken over: its 'exit' has gone by, its output has not.
        this.#capture(svc, stdout);
        this.#capture(svc, stderr);
        this.#exited(svc, { code: child.exitCode, signal: child.signalCode });
        return;
      }
    } else {
      this.#record(svc, 'Preparing', `Starting ${command}`);
      try {
        child = spawn(command, args, { argv0, env, detached: false, stdio: ['ignore', 'pipe', 'pipe'] });
        ({ stdout, stderr } = child);
      } catch (err) {
        this.#exited(svc, { error: toError(err) });
        return;
      }
      if (child.pid === undefined) {
        // ENOENT, EACCES...: libuv reports it as an 'error' on the next tick, with no 'exit'.
        const gen = svc.gen;
        child.once('error', (err) => {
          if (svc.gen === gen && !svc.run) this.#exited(svc, { error: err });
        });
        return;
      }
    }
    child.on('error', () => {}); // after a successful spawn only kill() can fail; 'exit' still follows

    let resolveExited!: () => void;
    const exited = new Promise<void>((resolve) => (resolveExited = resolve));
    const run: Run = { child, pid: child.pid!, startedAt: Date.now(), stopping: false, exited, resolveExited };
    svc.run = run;
    svc.healthy = undefined;
    this.#capture(svc, stdout);
    this.#capture(svc, stderr);
    child.once('exit', (code, signal) => {
      if (svc.run === run) this.#exited(svc, { code, signal });
    });
    this.#record(svc, 'Running', `Process started (pid ${run.pid})`);
    this.#pollHealth(svc, run);
  }

  // --- exits and restarts ---

  #exited(svc: Service, exit: Exit): void {
    const run = svc.run;
    if (run) {
      clearTimeout(run.healthTimer);
      clearTimeout(run.killTimer);
      svc.run = undefined;
      run.resolveExited();
    }
    svc.healthy = undefined;
    const what = describeExit(exit);
    const policy = svc.spec.restart ?? 'always';
    const success = !('error' in exit) && exit.code === 0;

    if (!svc.wanted) {
      this.#record(svc, 'Finished', `Stopped: ${what}`);
    } else if (success && policy !== 'always') {
      svc.wanted = false;
      svc.completed = true;
      this.#record(svc, 'Finished', capitalize(what));
    } else if (!success && policy === 'never') {
      svc.wanted = false;
      this.#record(svc, 'Failed', capitalize(what));
    } else {
      this.#restartLater(svc, run, what);
    }
    this.#schedule();
  }

  #restartLater(svc: Service, run: Run | undefined, what: string): void {
    if (run && Date.now() - run.startedAt >= this.#stableAfter) svc.attempt = 0;
    const delay = Math.min(this.#backoffBase * 2 ** svc.attempt, this.#backoffMax);
    svc.attempt++;
    this.#record(svc, 'Waiting', `${capitalize(what)}; restarting in ${delay}ms`);
    svc.restartTimer = setTimeout(() => {
      svc.restartTimer = undefined;
      svc.restarts++;
      svc.pendingStart = true;
      this.#schedule();
    }, delay);
  }

  #unwant(svc: Service): void {
    svc.wanted = false;
    svc.gen++;
    svc.pendingStart = false;
    clearTimeout(svc.restartTimer);
    svc.restartTimer = undefined;
  }

  // --- health ---

  #pollHealth(svc: Service, run: Run): void {
    const check = svc.spec.healthCheck;
    if (!check) return;
    const timing = healthTiming(svc.spec.healthInterval ?? DEFAULT_HEALTH_INTERVAL, { backoffMax: this.#healthBackoffMax, timeoutMax: this.#healthTimeoutMax });
    // Until the process has passed its first check, poll quickly: dependents wait on it.
    let passedOnce = false;
    let failures = 0; // in a row
    const poll = async (): Promise<void> => {
      let ok = true;
      let error = '';
      try {
        await withTimeout(Promise.resolve().then(check), timing.timeout(failures));
      } catch (err) {
        ok = false;
        error = errorMessage(err);
      }
      if (svc.run !== run) return; // the process exited meanwhile
      // Being stopped, a daemon closes its socket first: that is the stop, not a failure.
      if (run.stopping) return;
      failures = ok ? 0 : failures + 1;
      let healthy: boolean;
      let message: string;
      if (ok) {
        [healthy, message] = [true, 'Health check successful'];
      } else if (!passedOnce) {
        // Until its first success a service is starting (its socket is not there yet): not a failure.
        [healthy, message] = [false, STARTING_HEALTH_MESSAGE];
      } else if (failures < this.#healthFailures) {
        // Not yet: a slow answer under load; the service stays healthy, and the message says so.
        [healthy, message] = [svc.healthy !== false, `Health check failed (${failures} of ${this.#healthFailures} in a row before it counts): ${error}`];
      } else {
        [healthy, message] = [false, `Health check failed: ${error}`];
      }
      svc.lastHealthMessage = message;
      if (svc.healthy !== healthy) {
        svc.healthy = healthy;
        this.#record(svc, svc.state, message);
        this.#schedule();
      }
      passedOnce ||= ok;
      run.healthTimer = setTimeout(poll, passedOnce ? timing.next(failures) : timing.startup());
    };
    run.healthTimer = setTimeout(poll, 0);
  }

  // --- output ---

  #capture(svc: Service, stream: Readable | null): void {
    if (!stream) return;
    const decoder = new StringDecoder('utf8');
    let partial = '';
    stream.on('data', (chunk: Buffer) => {
      partial += decoder.write(chunk);
      let nl: number;
      while ((nl = partial.indexOf('\n')) !== -1) {
        this.#line(svc, partial.slice(0, nl));
        partial = partial.slice(nl + 1);
      }
      while (partial.length > MAX_LINE) {
        this.#line(svc, partial.slice(0, MAX_LINE));
        partial = partial.slice(MAX_LINE);
      }
    });
    stream.on('end', () => {
      partial += decoder.end();
      if (partial) this.#line(svc, partial);
      partial = '';
    });
    stream.on('error', () => {});
  }

  #line(svc: Service, raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    pushBounded(svc.logs, line, this.#logLines);
    for (const follower of svc.followers) {
      try {
        follower(line);
      } catch {
        // a broken follower must not break capture
      }
    }
    this.#log?.(`${svc.spec.id}: ${line}`);
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

// ---------------------------------------------------------------------------------------------
// Small helpers.

function info(svc: Service): ServiceInfo {
  return {
    id: svc.spec.id,
    state: svc.state,
    pid: svc.run?.pid,
    healthy: svc.healthy,
    lastHealthMessage: svc.lastHealthMessage,
    restarts: svc.restarts,
    events: svc.events.map((ev) => ({ ...ev })),
  };
}

function isPending(state: ServiceState): boolean {
  return state === 'Waiting' || state === 'Preparing';
}

function pushBounded<T>(items: T[], item: T, max: number): void {
  items.push(item);
  if (items.length > max) items.splice(0, items.length - max);
}

function describeExit(exit: Exit): string {
  if ('error' in exit) return `failed to start: ${exit.error.message}`;
  if (exit.signal) return `process killed by signal ${exit.signal}`;
  return `process exited with code ${exit.code}`;
}

/**
 * When health checks run and how long one may take, after `failures` failed checks in a row:
 * the interval and the timeout double with each failure (up to their caps), and come back to
 * normal with a success. Before the first success (startup) checks come quickly.
 */
export function healthTiming(interval: number, caps: { backoffMax: number; timeoutMax: number }) {
  const grow = (base: number, failures: number, cap: number) => Math.max(base, Math.min(base * 2 ** Math.min(failures, 16), cap));
  return {
    next: (failures: number) => grow(interval, failures, caps.backoffMax),
    timeout: (failures: number) => grow(Math.max(interval, MIN_HEALTH_TIMEOUT), failures, caps.timeoutMax),
    // A starting service's checks fail at once (no socket yet) and cost nothing: no backoff, so that it counts as up as soon as it is.
    startup: () => Math.min(interval, STARTUP_HEALTH_INTERVAL),
  };
}

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms}ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

function errorMessage(err: unknown): string {
  return toError(err).message;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
