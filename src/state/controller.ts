// Controllers: the one way machined turns resources into other resources.
//
// A controller declares its inputs (namespace + type; 'strong' ones it may also hold with
// finalizers) and its outputs (types; 'exclusive' when no other controller may write the
// type, 'shared' when several may, each owning its own resources). Its run() is one reconcile
// pass: read the inputs, make the outputs match. The runtime calls it once all input watches
// are established, then again whenever an input changes: changes that arrive while a pass is
// running, or in the same tick, are coalesced into one more pass. A pass that throws is logged
// and retried with exponential backoff.
//
// Each controller gets a state handle that reads only its inputs and outputs and writes only
// its outputs, always as owner = the controller's name.

import { createOrUpdate } from './apply.ts';
import { type Logger, StderrLogger } from '../lib/log.ts';
import { type Resource, NotFoundError, jsonEqual, newResource } from './resource.ts';
import type { ListOptions, State } from './state.ts';

export interface ControllerInput {
  namespace: string;
  type: string;
  kind: 'weak' | 'strong';
}

export interface ControllerOutput {
  type: string;
  kind: 'exclusive' | 'shared';
}

export interface Controller {
  /** Unique; the owner of everything the controller writes. By convention named after the
   *  resource it outputs, e.g. 'HostnameStatusController'. */
  name: string;
  inputs: ControllerInput[];
  outputs: ControllerOutput[];
  /** One reconcile pass. Should return soon after ctx.signal aborts. */
  run(ctx: ControllerContext): Promise<void>;
}

export interface ControllerContext {
  readonly name: string;
  readonly state: ControllerState;
  /** Aborted when the runtime stops. */
  readonly signal: AbortSignal;
  /** Lines are prefixed with the controller's name. */
  readonly log: Logger;
  /** Run again after ms even if no input changes (the earliest request wins). */
  requeueAfter(ms: number): void;
}

/** A State restricted to one controller's inputs and outputs, writing as that controller. */
export interface ControllerState {
  get<S = unknown>(namespace: string, type: string, id: string): Promise<Resource<S>>;
  /** undefined instead of NotFoundError. */
  find<S = unknown>(namespace: string, type: string, id: string): Promise<Resource<S> | undefined>;
  list<S = unknown>(namespace: string, type: string, opts?: ListOptions): Promise<Array<Resource<S>>>;
  create<S>(resource: Resource<S>): Promise<Resource<S>>;
  update<S>(resource: Resource<S>, opts?: { expectedVersion?: number }): Promise<Resource<S>>;
  /**
   * Makes the resource exist with this spec (and labels, when given): creates it, updates it
   * when it differs, leaves it alone (same version) when it already matches.
   */
  apply<S>(namespace: string, type: string, id: string, spec: S, opts?: { labels?: Record<string, string> }): Promise<Resource<S>>;
  teardown(namespace: string, type: string, id: string): Promise<Resource>;
  destroy(namespace: string, type: string, id: string): Promise<void>;
  /**
   * An output no longer wanted: torn down (which bars new finalizers), then destroyed once no
   * finalizer holds it. False while one does (the holder's release brings another pass).
   */
  retire(resource: Resource): Promise<boolean>;
  /** Finalizers on strong inputs. */
  addFinalizer(namespace: string, type: string, id: string, ...finalizers: string[]): Promise<Resource>;
  removeFinalizer(namespace: string, type: string, id: string, ...finalizers: string[]): Promise<Resource>;
}

/** A controller touched a resource outside its declared inputs and outputs. */
export class ControllerAccessError extends Error {
  override name = 'ControllerAccessError';
}

export interface ControllerRuntimeOptions {
  /** Default: stderr. */
  log?: Logger;
  /** First retry delay in ms after a failed pass, doubled per consecutive failure. Default 100. */
  backoffBase?: number;
  /** Upper bound of the retry delay in ms. Default 30000. */
  backoffMax?: number;
}

export interface ControllerStatus {
  name: string;
  /** Passes that completed. */
  runs: number;
  /** Consecutive failed passes (0 after a success). */
  failures: number;
  lastError?: string;
}

export class ControllerRuntime {
  readonly #state: State;
  readonly #log: Logger;
  readonly #backoffBase: number;
  readonly #backoffMax: number;
  readonly #runners = new Map<string, Runner>();
  #abort: AbortController | undefined;
  #stopped = false;

  constructor(state: State, opts: ControllerRuntimeOptions = {}) {
    this.#state = state;
    this.#log = opts.log ?? new StderrLogger('controllers');
    this.#backoffBase = opts.backoffBase ?? 100;
    this.#backoffMax = opts.backoffMax ?? 30_000;
  }

  /** Throws on an invalid controller, a taken name, or an output another controller holds
   *  exclusively. A controller registered after start() starts at once. */
  register(controller: Controller): void {
    if (this.#stopped) throw new Error('controller runtime is stopped');
    validateController(controller);
    if (this.#runners.has(controller.name)) throw new Error(`controller ${controller.name} is already registered`);
    for (const out of controller.outputs) {
      for (const other of this.#runners.values()) {
        const theirs = other.controller.outputs.find((o) => o.type === out.type);
        if (theirs && (theirs.kind === 'exclusive' || out.kind === 'exclusive')) {
          throw new Error(
            `controller ${controller.name} cannot output ${out.type}: controller ${other.controller.name} outputs it` +
              (theirs.kind === 'exclusive' ? ' exclusively' : ' (shared, but this one asks for exclusive)'),
          );
        }
      }
    }
    const runner = new Runner(controller, this.#state, this.#log, this.#backoffBase, this.#backoffMax);
    this.#runners.set(controller.name, runner);
    if (this.#abort) runner.start(this.#abort.signal);
  }

  start(): void {
    if (this.#stopped) throw new Error('controller runtime is stopped');
    if (this.#abort) return;
    this.#abort = new AbortController();
    for (const runner of this.#runners.values()) runner.start(this.#abort.signal);
  }

  /** Aborts every controller and waits for the passes in progress to end. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort?.abort();
    await Promise.all([...this.#runners.values()].map((r) => r.finished()));
  }

  status(): ControllerStatus[] {
    return [...this.#runners.values()].map((r) => r.status());
  }

  /** What each registered controller declares (name, inputs, outputs), in registration order:
   *  the dependency graph the inspect API serves. */
  dependencies(): ControllerDependencies[] {
    return [...this.#runners.values()].map(({ controller: c }) => ({
      name: c.name,
      inputs: c.inputs.map((i) => ({ ...i })),
      outputs: c.outputs.map((o) => ({ ...o })),
    }));
  }
}

/** A controller's declarations without its code. */
export type ControllerDependencies = Pick<Controller, 'name' | 'inputs' | 'outputs'>;

export function registerControllers(runtime: ControllerRuntime, controllers: readonly Controller[]): void {
  for (const c of controllers) runtime.register(c);
}

function validateController(c: Controller): void {
  if (typeof c.name !== 'string' || c.name === '') throw new Error('controller without a name');
  const where = `controller ${c.name}`;
  if (typeof c.run !== 'function') throw new Error(`${where}: no run function`);
  for (const input of c.inputs) {
    if (!input.namespace || !input.type) throw new Error(`${where}: input without namespace or type`);
    if (input.kind !== 'weak' && input.kind !== 'strong') throw new Error(`${where}: input ${input.type}: bad kind ${String(input.kind)}`);
  }
  const seen = new Set<string>();
  for (const out of c.outputs) {
    if (!out.type) throw new Error(`${where}: output without a type`);
    if (out.kind !== 'exclusive' && out.kind !== 'shared') throw new Error(`${where}: output ${out.type}: bad kind ${String(out.kind)}`);
    if (seen.has(out.type)) throw new Error(`${where}: output ${out.type} declared twice`);
    seen.add(out.type);
  }
}

// ---------------------------------------------------------------------------------------------

class Runner {
  readonly #done: Promise<void>;
  #resolveDone!: () => void;
  #started = false;
  #runs = 0;
  #failures = 0;
  #lastError: string | undefined;
  /** An input changed since the last pass began. */
  #dirty = true;
  #wake: (() => void) | undefined;
  #requeueTimer: NodeJS.Timeout | undefined;
  #requeueAt = Infinity;
  readonly #log: Logger;

  constructor(
    readonly controller: Controller,
    private readonly state: State,
    log: Logger,
    private readonly backoffBase: number,
    private readonly backoffMax: number,
  ) {
    const prefix = `controller ${controller.name}: `;
    this.#log = {
      info: (m) => log.info(prefix + m),
      warn: (m) => log.warn(prefix + m),
      error: (m) => log.error(prefix + m),
    };
    this.#done = new Promise((resolve) => (this.#resolveDone = resolve));
  }

  /** Resolves when the loop has ended (at once when it never started). */
  finished(): Promise<void> {
    return this.#started ? this.#done : Promise.resolve();
  }

  status(): ControllerStatus {
    return {
      name: this.controller.name,
      runs: this.#runs,
      failures: this.#failures,
      ...(this.#lastError === undefined ? {} : { lastError: this.#lastError }),
    };
  }

  start(signal: AbortSignal): void {
    this.#started = true;
    this.#loop(signal)
      .catch((err: unknown) => this.#log.error(`runtime loop failed: ${errorText(err)}`))
      .finally(() => {
        clearTimeout(this.#requeueTimer);
        this.#resolveDone();
      });
  }

  #trigger = (): void => {
    this.#dirty = true;
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  };

  async #loop(signal: AbortSignal): Promise<void> {
    const onAbort = () => this.#trigger();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.all(this.controller.inputs.map((input) => this.#watchInput(input, signal)));
      if (signal.aborted) return;
      const ctx: ControllerContext = {
        name: this.controller.name,
        state: new ScopedState(this.state, this.controller),
        signal,
        log: this.#log,
        requeueAfter: (ms) => this.#requeue(ms, signal),
      };
      while (!signal.aborted) {
        while (!this.#dirty && !signal.aborted) await new Promise<void>((resolve) => (this.#wake = resolve));
        if (signal.aborted) break;
        await new Promise(setImmediate); // let a burst of writes in this tick land first
        this.#dirty = false;
        try {
          await this.controller.run(ctx);
          this.#runs++;
          if (this.#failures > 0) this.#log.info(`recovered after ${this.#failures} failed attempt(s)`);
          this.#failures = 0;
        } catch (err) {
          if (signal.aborted) break;
          this.#failures++;
          this.#lastError = errorText(err);
          const delay = Math.min(this.backoffMax, this.backoffBase * 2 ** (this.#failures - 1));
          this.#log.error(`failed (attempt ${this.#failures}), restarting in ${delay} ms: ${this.#lastError}`);
          await sleep(delay, signal);
          this.#dirty = true;
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Watches one input kind for as long as the runtime runs, triggering a pass on every live
   * event. Resolves once the first watch has bootstrapped. When a watch errors (it fell
   * behind), it watches again and triggers a pass, since changes may have been missed.
   */
  #watchInput(input: ControllerInput, signal: AbortSignal): Promise<void> {
    return new Promise<void>((ready) => {
      const loop = async () => {
        let first = true;
        while (!signal.aborted) {
          let live = false;
          for await (const ev of this.state.watchKind(input.namespace, input.type, { signal, bootstrap: true })) {
            if (ev.type === 'bootstrapped') {
              live = true;
              if (first) ready();
              else this.#trigger();
              first = false;
            } else if (ev.type === 'errored') {
              this.#log.warn(`watch of ${input.namespace}/${input.type} ended (${ev.error.message}); watching again`);
            } else if (live) {
              this.#trigger();
            }
          }
          await new Promise(setImmediate); // never spin on a watch that keeps ending
        }
        ready();
      };
      loop().catch((err: unknown) => {
        this.#log.error(`watch of ${input.namespace}/${input.type} failed: ${errorText(err)}`);
        ready();
      });
    });
  }

  #requeue(ms: number, signal: AbortSignal): void {
    if (signal.aborted) return;
    const at = Date.now() + Math.max(0, ms);
    if (at >= this.#requeueAt) return;
    clearTimeout(this.#requeueTimer);
    this.#requeueAt = at;
    this.#requeueTimer = setTimeout(() => {
      this.#requeueAt = Infinity;
      this.#requeueTimer = undefined;
      this.#trigger();
    }, ms);
  }
}

class ScopedState implements ControllerState {
  readonly #owner: string;

  constructor(
    private readonly state: State,
    private readonly controller: Controller,
  ) {
    this.#owner = controller.name;
  }

  async get<S = unknown>(namespace: string, type: string, id: string): Promise<Resource<S>> {
    this.#canRead(namespace, type);
    return this.state.get<S>(namespace, type, id);
  }

  async find<S = unknown>(namespace: string, type: string, id: string): Promise<Resource<S> | undefined> {
    this.#canRead(namespace, type);
    try {
      return await this.state.get<S>(namespace, type, id);
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }

  async list<S = unknown>(namespace: string, type: string, opts?: ListOptions): Promise<Array<Resource<S>>> {
    this.#canRead(namespace, type);
    return this.state.list<S>(namespace, type, opts);
  }

  async create<S>(resource: Resource<S>): Promise<Resource<S>> {
    this.#canWrite(resource.metadata.type);
    return this.state.create(resource, { owner: this.#owner });
  }

  async update<S>(resource: Resource<S>, opts: { expectedVersion?: number } = {}): Promise<Resource<S>> {
    this.#canWrite(resource.metadata.type);
    return this.state.update(resource, { owner: this.#owner, ...opts });
  }

  async apply<S>(namespace: string, type: string, id: string, spec: S, opts: { labels?: Record<string, string> } = {}): Promise<Resource<S>> {
    this.#canWrite(type);
    const owner = this.#owner;
    const stored = await createOrUpdate<S>(
      {
        find: () => this.find<S>(namespace, type, id),
        create: (r) => this.state.create(r, { owner }),
        update: (r, cur) => this.state.update(r, { owner, expectedVersion: cur.metadata.version }),
      },
      { namespace, type, id },
      spec,
      { ...(opts.labels ? { labels: opts.labels } : {}), owner },
    );
    return stored!;
  }

  async teardown(namespace: string, type: string, id: string): Promise<Resource> {
    this.#canWrite(type);
    return this.state.teardown(namespace, type, id, { owner: this.#owner });
  }

  async destroy(namespace: string, type: string, id: string): Promise<void> {
    this.#canWrite(type);
    return this.state.destroy(namespace, type, id, { owner: this.#owner });
  }

  async retire(resource: Resource): Promise<boolean> {
    const { namespace, type, id } = resource.metadata;
    const down = resource.metadata.phase === 'running' ? await this.teardown(namespace, type, id) : resource;
    if (down.metadata.finalizers.length > 0) return false;
    await this.destroy(namespace, type, id);
    return true;
  }

  async addFinalizer(namespace: string, type: string, id: string, ...finalizers: string[]): Promise<Resource> {
    this.#canFinalize(namespace, type);
    return this.state.addFinalizer(namespace, type, id, ...finalizers);
  }

  async removeFinalizer(namespace: string, type: string, id: string, ...finalizers: string[]): Promise<Resource> {
    this.#canFinalize(namespace, type);
    return this.state.removeFinalizer(namespace, type, id, ...finalizers);
  }

  #canRead(namespace: string, type: string): void {
    const ok =
      this.controller.inputs.some((i) => i.namespace === namespace && i.type === type) ||
      this.controller.outputs.some((o) => o.type === type);
    if (!ok) throw new ControllerAccessError(`controller ${this.#owner} may not read ${namespace}/${type}: not among its inputs or outputs`);
  }

  #canWrite(type: string): void {
    if (!this.controller.outputs.some((o) => o.type === type)) {
      throw new ControllerAccessError(`controller ${this.#owner} may not write ${type}: not among its outputs`);
    }
  }

  #canFinalize(namespace: string, type: string): void {
    if (!this.controller.inputs.some((i) => i.namespace === namespace && i.type === type && i.kind === 'strong')) {
      throw new ControllerAccessError(`controller ${this.#owner} may not set finalizers on ${namespace}/${type}: not a strong input`);
    }
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
