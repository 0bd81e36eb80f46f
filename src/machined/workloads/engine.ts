// The workload engine: keeps the node's containers as the configuration declares them. Given the
// declared containers (ContainerConfig documents, resolved into ContainerRunSpecs) it makes sure
// each one's image is in the node's store (pulling it once; a present image is never pulled
// again, so a node whose registry is gone still starts its containers), that each runs as one
// instance of the document as it is now (a changed document replaces the instance, a removed one
// stops it and leaves nothing behind), that an instance that exits is started again 5 s later
// (Talos's restart delay for ContainerConfig containers), and that one whose health probe fails
// `failureThreshold` times in a row is restarted. Every change of state goes to `publish`, which
// machined turns into resources (src/machined/workloads/controller.ts).
//
// A container's failure is its own: nothing here throws to the caller, fails boot or blocks an
// upgrade by itself; the upgrade's commit asks `settled()` instead (item 7 of the workloads
// issue: commit only once every declared container runs and is healthy).
import { stableHash } from '../../lib/stable-hash.ts';
import type { ContainerRunSpec, PullProgress } from '../../containerd/types.ts';
import type { Logger } from '../../lib/log.ts';
import { type HealthProbe, probeOnce } from './probes.ts';

/** What the engine asks of the container runtime (machined: containerd; tests: memory). */
export interface RuntimePort {
  imagePresent(ref: string): Promise<boolean>;
  /** Resolves with the digest the reference resolved to, when known. */
  pull(ref: string, onProgress?: (p: PullProgress) => void): Promise<{ digest?: string } | void>;
  /** Creates and starts the container; one of this id that runs already is replaced. */
  start(spec: ContainerRunSpec, hash: string): Promise<{ pid: number }>;
  /** Containers the runtime has in the namespace, with the hash label `start` gave them. */
  list(): Promise<Array<{ id: string; hash?: string; pid: number; running: boolean }>>;
  /** Stops the task (SIGTERM, then SIGKILL) and deletes task, container and snapshot. */
  remove(id: string): Promise<void>;
  /** Runs argv inside the container; resolves with its exit code. */
  exec(id: string, argv: string[], timeoutMs: number): Promise<number>;
  /** Replaces the container's task with a new one (same container and rootfs). */
  restart(id: string): Promise<{ pid: number }>;
}

export type ImagePhase = 'pending' | 'pulling' | 'ready' | 'failed';
export type InstancePhase = 'waiting' | 'starting' | 'running' | 'exited' | 'failed';

export interface ImageState {
  ref: string;
  phase: ImagePhase;
  /** What the reference resolved to, once pulled. */
  digest?: string;
  error?: string;
  /** Bytes so far and expected over all blobs of the pull in progress. */
  progress?: { offset: number; total: number };
}

export interface InstanceState {
  id: string;
  image: string;
  phase: InstancePhase;
  /** The declared document's hash this instance runs. */
  hash: string;
  pid: number;
  /** Times it was started since the document was declared (1 = first start). */
  starts: number;
  startedAt?: string;
  exitCode?: number;
  /** undefined: no probe declared. */
  healthy?: boolean;
  /** Why it is waiting or failed, or the last probe failure. */
  message?: string;
}

export interface EnginePublisher {
  image(ref: string, s: ImageState | undefined): void;
  instance(id: string, s: InstanceState | undefined): void;
}

export interface EngineOptions {
  port: RuntimePort;
  publish: EnginePublisher;
  log: Logger;
  /** Whether a dependsOn condition holds now (paths, networks, time); containers are checked here. */
  dependencyMet?: (spec: Declared) => string | undefined;
  restartDelayMs?: number;
  now?: () => Date;
}

export interface Declared {
  spec: ContainerRunSpec;
  probe?: HealthProbe;
  dependsOn?: { containers?: string[]; paths?: string[]; networks?: string[]; time?: boolean };
}

/** Talos restarts a ContainerConfig container 5 seconds after it stops. */
export const RESTART_DELAY_MS = 5000;

/** The hash that tells a changed document: spec and probe, in a stable key order. */
export function declaredHash(d: Declared): string {
  return stableHash({ spec: d.spec, probe: d.probe ?? null }).slice(0, 16);
}

interface Slot {
  d: Declared;
  hash: string;
  state: InstanceState;
  restartTimer?: NodeJS.Timeout;
  probeTimer?: NodeJS.Timeout;
  failures: number;
  successes: number;
  startedMs: number;
  busy?: Promise<void>;
}

export class WorkloadEngine {
  readonly #o: EngineOptions;
  readonly #slots = new Map<string, Slot>();
  readonly #images = new Map<string, ImageState>();
  readonly #pulls = new Map<string, Promise<boolean>>();
  #declared: Declared[] = [];
  #stopped = false;
  #pass: Promise<void> = Promise.resolve();
  #again = false;
  /** A declared container failed for good: its start failed, or it went unhealthy past its threshold. */
  onFailure: ((why: string) => void) | undefined;

  constructor(o: EngineOptions) {
    this.#o = o;
  }

  /** The declared containers changed (or may have): reconcile. Resolves when the pass is done. */
  declare(declared: Declared[]): Promise<void> {
    this.#declared = declared;
    return this.reconcile();
  }

  /** One reconcile pass, after the one under way; passes asked for meanwhile run as one. */
  reconcile(): Promise<void> {
    if (this.#again) return this.#pass;
    this.#again = true;
    this.#pass = this.#pass.then(async () => {
      this.#again = false;
      if (this.#stopped) return;
      try {
        await this.#reconcile();
      } catch (err) {
        this.#o.log.warn(`containers: ${(err as Error).message}`);
      }
    });
    return this.#pass;
  }

  /**
   * An instance's task exited (the runtime's event): restart it after the delay. `pid` names the
   * task that exited: the exit of an instance already replaced is not the current one's.
   */
  exited(id: string, exitCode: number, pid?: number): void {
    const slot = this.#slots.get(id);
    if (!slot || slot.state.phase !== 'running') return;
    if (pid !== undefined && pid !== slot.state.pid) return;
    this.#o.log.warn(`container ${id}: exited with ${exitCode}; restarting in ${(this.#o.restartDelayMs ?? RESTART_DELAY_MS) / 1000} s`);
    this.#clearProbe(slot);
    this.#set(slot, { phase: 'exited', exitCode, pid: 0, ...(slot.d.probe ? { healthy: false } : {}) });
    this.#scheduleRestart(slot);
  }

  /**
   * The API's Restart of a declared container: a new task, counted as a start, its probe
   * started again. False when no declared container has this id (the caller restarts it as
   * any other container).
   */
  async restart(id: string): Promise<boolean> {
    const slot = this.#slots.get(id);
    if (!slot) return false;
    await slot.busy;
    clearTimeout(slot.restartTimer);
    slot.restartTimer = undefined;
    this.#clearProbe(slot);
    this.#set(slot, { phase: 'starting', message: undefined, exitCode: undefined });
    const run = (async () => {
      try {
        const { pid } = await this.#o.port.restart(id);
        slot.failures = 0;
        slot.successes = 0;
        slot.startedMs = Date.now();
        this.#set(slot, { phase: 'running', pid, starts: slot.state.starts + 1, startedAt: (this.#o.now?.() ?? new Date()).toISOString(), ...(slot.d.probe ? { healthy: false } : {}) });
        this.#o.log.info(`container ${id}: restarted (pid ${pid})`);
        this.#startProbe(slot);
      } catch (err) {
        this.#set(slot, { phase: 'failed', pid: 0, message: (err as Error).message });
        this.#scheduleRestart(slot);
        throw err;
      }
    })();
    slot.busy = run.catch(() => {});
    await run;
    return true;
  }

  /** Whether every declared container runs (and, with a probe, is healthy); else why not. */
  settled(): { ok: boolean; waiting: string[] } {
    const waiting: string[] = [];
    for (const d of this.#declared) {
      const s = this.#slots.get(d.spec.name)?.state;
      if (!s || s.phase !== 'running') waiting.push(`${d.spec.name}: ${s ? s.phase : 'not started'}${s?.message ? ` (${s.message})` : ''}`);
      else if (d.probe && s.healthy !== true) waiting.push(`${d.spec.name}: not healthy${s.message ? ` (${s.message})` : ''}`);
    }
    return { ok: waiting.length === 0, waiting };
  }

  /** The instance state of each declared container (for tests and the API). */
  instances(): InstanceState[] {
    return [...this.#slots.values()].map((s) => ({ ...s.state }));
  }

  /**
   * Stops the timers and probes: nothing is started or restarted after (machined shutting down;
   * NodeWorkloads.stopAll then stops the containers, each with its stop signal and grace period).
   */
  stop(): void {
    this.#stopped = true;
    for (const s of this.#slots.values()) {
      clearTimeout(s.restartTimer);
      this.#clearProbe(s);
    }
  }

  async #reconcile(): Promise<void> {
    const { port, log } = this.#o;
    const want = new Map(this.#declared.map((d) => [d.spec.name, d]));
    // Removed documents: stop and delete their instances, forget their state.
    for (const [id, slot] of this.#slots) {
      if (want.has(id)) continue;
      clearTimeout(slot.restartTimer);
      this.#clearProbe(slot);
      this.#slots.delete(id);
      await slot.busy;
      try {
        await port.remove(id);
        log.info(`container ${id}: removed`);
      } catch (err) {
        log.warn(`container ${id}: remove: ${(err as Error).message}`);
      }
      this.#o.publish.instance(id, undefined);
    }
    // Containers the runtime has that no document declares (a document removed while machined
    // was down): removed too, so nothing runs that the configuration does not name.
    const present = await port.list().catch(() => []);
    for (const c of present) {
      if (want.has(c.id) || this.#slots.has(c.id)) continue;
      try {
        await port.remove(c.id);
        log.info(`container ${c.id}: removed (no document declares it)`);
      } catch (err) {
        log.warn(`container ${c.id}: remove: ${(err as Error).message}`);
      }
    }
    // Images no declared container uses any more: their status goes (the image stays stored).
    const refs = new Set(this.#declared.map((d) => d.spec.image));
    for (const ref of this.#images.keys()) {
      if (refs.has(ref)) continue;
      this.#images.delete(ref);
      this.#o.publish.image(ref, undefined);
    }
    for (const d of this.#declared) {
      const hash = declaredHash(d);
      let slot = this.#slots.get(d.spec.name);
      if (slot && slot.hash !== hash) {
        // A changed document: the old instance goes, a new one comes.
        clearTimeout(slot.restartTimer);
        this.#clearProbe(slot);
        log.info(`container ${d.spec.name}: its document changed; replacing the instance`);
        slot.d = d;
        slot.hash = hash;
        slot.state = { ...slot.state, hash, starts: 0, phase: 'waiting', pid: 0 };
        if (d.probe) slot.state.healthy = false;
        else delete slot.state.healthy;
      }
      if (!slot) {
        const running = present.find((c) => c.id === d.spec.name && c.running && c.hash === hash);
        slot = {
          d,
          hash,
          failures: 0,
          successes: 0,
          startedMs: Date.now(),
          state: { id: d.spec.name, image: d.spec.image, phase: running ? 'running' : 'waiting', hash, pid: running?.pid ?? 0, starts: running ? 1 : 0, ...(d.probe ? { healthy: false } : {}) },
        };
        this.#slots.set(d.spec.name, slot);
        if (running) {
          // machined restarted while containerd kept the instance: adopt it.
          log.info(`container ${d.spec.name}: running already (pid ${running.pid}); adopted`);
          this.#publishSlot(slot);
          this.#startProbe(slot);
          continue;
        }
      }
      if (slot.state.phase === 'running' || slot.state.phase === 'starting' || slot.restartTimer) continue;
      const why = this.#blocked(d);
      if (why) {
        this.#set(slot, { phase: 'waiting', message: why });
        continue;
      }
      if (!(await this.#ensureImage(d.spec.image))) {
        this.#set(slot, { phase: 'waiting', message: `image ${d.spec.image}: ${this.#images.get(d.spec.image)?.error ?? 'not pulled yet'}` });
        continue;
      }
      await this.#start(slot);
    }
  }

  /** Why a container may not start yet (its dependencies), or undefined. */
  #blocked(d: Declared): string | undefined {
    for (const other of d.dependsOn?.containers ?? []) {
      const s = this.#slots.get(other)?.state;
      const decl = this.#declared.find((x) => x.spec.name === other);
      if (!s || s.phase !== 'running' || (decl?.probe && s.healthy !== true)) return `waiting for container ${other}`;
    }
    return this.#o.dependencyMet?.(d);
  }

  /** The image is in the store (pulled now if it was not); false while pulling or after a failure. */
  async #ensureImage(ref: string): Promise<boolean> {
    const st = this.#images.get(ref);
    if (st?.phase === 'ready') return true;
    if (this.#pulls.has(ref)) return false;
    if (await this.#o.port.imagePresent(ref).catch(() => false)) {
      this.#image(ref, { ref, phase: 'ready' });
      return true;
    }
    const totals = new Map<string, { offset: number; total: number }>();
    this.#image(ref, { ref, phase: 'pulling' });
    let lastPublish = 0;
    const pull = this.#o.port
      .pull(ref, (p) => {
        totals.set(p.digest, { offset: p.offset, total: p.total });
        const now = Date.now();
        if (now - lastPublish < 1000 && !p.done) return;
        lastPublish = now;
        let offset = 0;
        let total = 0;
        for (const t of totals.values()) {
          offset += t.offset;
          total += t.total;
        }
        this.#image(ref, { ref, phase: 'pulling', progress: { offset, total } });
      })
      .then(
        (r) => {
          this.#o.log.info(`image ${ref}: pulled`);
          this.#image(ref, { ref, phase: 'ready', ...(r?.digest ? { digest: r.digest } : {}) });
          return true;
        },
        (err: Error) => {
          this.#o.log.warn(`image ${ref}: ${err.message}`);
          this.#image(ref, { ref, phase: 'failed', error: err.message });
          return false;
        },
      )
      .finally(() => {
        this.#pulls.delete(ref);
        // A failed pull is tried again later (the registry may come back).
        if (this.#images.get(ref)?.phase === 'failed') setTimeout(() => void this.#retryImage(ref), 30_000).unref();
        void this.reconcile();
      });
    this.#pulls.set(ref, pull);
    return false;
  }

  #retryImage(ref: string): Promise<void> {
    if (this.#stopped || this.#images.get(ref)?.phase !== 'failed') return Promise.resolve();
    this.#images.delete(ref);
    return this.reconcile();
  }

  async #start(slot: Slot): Promise<void> {
    const { log } = this.#o;
    const id = slot.d.spec.name;
    // exitCode stays: it is the last exit's, until the next one.
    this.#set(slot, { phase: 'starting', message: undefined });
    const run = (async () => {
      try {
        const { pid } = await this.#o.port.start(slot.d.spec, slot.hash);
        if (this.#slots.get(id) !== slot) return;
        slot.failures = 0;
        slot.successes = 0;
        slot.startedMs = Date.now();
        this.#set(slot, { phase: 'running', pid, starts: slot.state.starts + 1, startedAt: (this.#o.now?.() ?? new Date()).toISOString(), ...(slot.d.probe ? { healthy: false } : {}) });
        log.info(`container ${id}: running (pid ${pid})`);
        this.#startProbe(slot);
      } catch (err) {
        if (this.#slots.get(id) !== slot) return;
        log.warn(`container ${id}: start: ${(err as Error).message}`);
        this.#set(slot, { phase: 'failed', pid: 0, message: (err as Error).message });
        this.onFailure?.(`container ${id} did not start: ${(err as Error).message}`);
        this.#scheduleRestart(slot);
      }
    })();
    slot.busy = run;
    await run;
  }

  #scheduleRestart(slot: Slot): void {
    clearTimeout(slot.restartTimer);
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = undefined;
      if (this.#slots.get(slot.d.spec.name) !== slot || this.#stopped) return;
      slot.state.phase = 'waiting';
      void this.reconcile();
    }, this.#o.restartDelayMs ?? RESTART_DELAY_MS);
    slot.restartTimer.unref?.();
  }

  #startProbe(slot: Slot): void {
    const p = slot.d.probe;
    if (!p) return;
    const tick = async () => {
      slot.probeTimer = undefined;
      if (this.#slots.get(slot.d.spec.name) !== slot || slot.state.phase !== 'running' || this.#stopped) return;
      const inStart = Date.now() - slot.startedMs < p.initialDelaySeconds * 1000;
      const err = inStart ? 'initial delay' : await probeOnce(p, { exec: (argv, ms) => this.#o.port.exec(slot.d.spec.name, argv, ms) });
      if (this.#slots.get(slot.d.spec.name) !== slot || slot.state.phase !== 'running') return;
      if (inStart) {
        // Not counted: the probe waits out initialDelaySeconds.
      } else if (err === undefined) {
        slot.failures = 0;
        slot.successes++;
        if (slot.state.healthy !== true && slot.successes >= p.successThreshold) {
          this.#o.log.info(`container ${slot.d.spec.name}: healthy`);
          this.#set(slot, { healthy: true, message: undefined });
        }
      } else {
        slot.successes = 0;
        slot.failures++;
        this.#set(slot, { message: `health probe: ${err} (${slot.failures}/${p.failureThreshold})` });
        if (slot.failures >= p.failureThreshold) {
          this.#o.log.warn(`container ${slot.d.spec.name}: unhealthy after ${slot.failures} failed probes (${err}); restarting it`);
          this.onFailure?.(`container ${slot.d.spec.name} is unhealthy: ${slot.failures} failed health probes (${err})`);
          this.#set(slot, { healthy: false, phase: 'exited', pid: 0 });
          const id = slot.d.spec.name;
          slot.busy = this.#o.port.remove(id).catch((e: Error) => this.#o.log.warn(`container ${id}: stop: ${e.message}`));
          await slot.busy;
          this.#scheduleRestart(slot);
          return;
        }
      }
      slot.probeTimer = setTimeout(() => void tick(), p.periodSeconds * 1000);
      slot.probeTimer.unref?.();
    };
    slot.probeTimer = setTimeout(() => void tick(), Math.min(1000, p.periodSeconds * 1000));
    slot.probeTimer.unref?.();
  }

  #clearProbe(slot: Slot): void {
    clearTimeout(slot.probeTimer);
    slot.probeTimer = undefined;
  }

  #set(slot: Slot, patch: Partial<InstanceState>): void {
    const next = { ...slot.state, ...patch };
    for (const k of Object.keys(next) as Array<keyof InstanceState>) if (next[k] === undefined) delete next[k];
    slot.state = next;
    this.#publishSlot(slot);
  }

  #publishSlot(slot: Slot): void {
    if (this.#slots.get(slot.d.spec.name) === slot) this.#o.publish.instance(slot.d.spec.name, { ...slot.state });
  }

  #image(ref: string, s: ImageState): void {
    this.#images.set(ref, s);
    this.#o.publish.image(ref, s);
  }
}
