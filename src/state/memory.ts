// The in-memory State that machined holds.
//
// Every operation takes effect synchronously when it is called (the promise only reports the
// result), so writes are applied, and watch events queued, in call order. Stored resources are
// never mutated: a write replaces the stored object, and watchers queue references to those
// immutable snapshots; callers only ever receive copies.

import {
  type Resource,
  type Ref,
  ConflictError,
  NotFoundError,
  OwnerConflictError,
  PhaseConflictError,
  WatchOverflowError,
  cloneResource,
  refString,
} from './resource.ts';
import {
  type ListOptions,
  type State,
  type UpdateOptions,
  type WatchEvent,
  type WatchKindOptions,
  type WatchOptions,
  type WriteOptions,
  matchLabels,
  parseLabelSelector,
  validateRef,
  validateResource,
} from './state.ts';

export interface MemoryStateOptions {
  /** Live events a watcher may have pending before it overflows. Default 1024. */
  watchQueueSize?: number;
}

const DEFAULT_WATCH_QUEUE = 1024;

export class MemoryState implements State {
  /** "namespace\0type" → id → stored snapshot. */
  readonly #kinds = new Map<string, Map<string, Resource>>();
  readonly #watchers = new Map<string, Set<Watcher>>();
  readonly #queueSize: number;

  constructor(opts: MemoryStateOptions = {}) {
    this.#queueSize = opts.watchQueueSize ?? DEFAULT_WATCH_QUEUE;
    if (!Number.isInteger(this.#queueSize) || this.#queueSize < 1) throw new RangeError('watchQueueSize must be a positive integer');
  }

  /** Open watches (for tests and diagnostics). */
  watcherCount(): number {
    let n = 0;
    for (const set of this.#watchers.values()) n += set.size;
    return n;
  }

  async get<S = unknown>(namespace: string, type: string, id: string): Promise<Resource<S>> {
    return cloneResource(this.#must({ namespace, type, id })) as Resource<S>;
  }

  async list<S = unknown>(namespace: string, type: string, opts: ListOptions = {}): Promise<Array<Resource<S>>> {
    validateRef({ namespace, type, id: '-' });
    const terms = opts.labelSelector === undefined ? [] : parseLabelSelector(opts.labelSelector);
    const kind = this.#kinds.get(kindKey(namespace, type));
    if (!kind) return [];
    return sortedIds(kind)
      .map((id) => kind.get(id)!)
      .filter((r) => matchLabels(r.metadata.labels, terms))
      .map((r) => cloneResource(r) as Resource<S>);
  }

  async create<S>(resource: Resource<S>, opts: WriteOptions): Promise<Resource<S>> {
    validateResource(resource);
    checkOwner(opts.owner);
    const { namespace, type, id } = resource.metadata;
    const key = kindKey(namespace, type);
    let kind = this.#kinds.get(key);
    if (kind?.has(id)) throw new ConflictError(resource.metadata, 'exists', 'already exists');
    const now = new Date();
    const stored: Resource = {
      metadata: {
        namespace,
        type,
        id,
        version: 1,
        owner: opts.owner,
        phase: 'running',
        labels: { ...resource.metadata.labels },
        annotations: { ...resource.metadata.annotations },
        created: now,
        updated: now,
        finalizers: [...new Set(resource.metadata.finalizers)],
      },
      spec: structuredClone(resource.spec),
    };
    if (!kind) this.#kinds.set(key, (kind = new Map()));
    kind.set(id, stored);
    this.#emit({ type: 'created', resource: stored });
    return cloneResource(stored) as Resource<S>;
  }

  async update<S>(resource: Resource<S>, opts: UpdateOptions): Promise<Resource<S>> {
    validateResource(resource);
    checkOwner(opts.owner);
    const old = this.#must(resource.metadata);
    if (old.metadata.owner !== opts.owner) throw new OwnerConflictError(old.metadata, old.metadata.owner, opts.owner);
    if (opts.expectedVersion !== undefined && opts.expectedVersion !== old.metadata.version) {
      throw new ConflictError(
        old.metadata,
        'version',
        `version is ${old.metadata.version}, expected ${opts.expectedVersion}`,
      );
    }
    if (old.metadata.phase !== 'running') throw new PhaseConflictError(old.metadata, old.metadata.phase, 'update');
    return this.#replace(old, {
      metadata: {
        ...old.metadata,
        labels: { ...resource.metadata.labels },
        annotations: { ...resource.metadata.annotations },
      },
      spec: structuredClone(resource.spec),
    }) as Resource<S>;
  }

  async teardown<S = unknown>(namespace: string, type: string, id: string, opts: WriteOptions): Promise<Resource<S>> {
    checkOwner(opts.owner);
    const old = this.#must({ namespace, type, id });
    if (old.metadata.owner !== opts.owner) throw new OwnerConflictError(old.metadata, old.metadata.owner, opts.owner);
    if (old.metadata.phase === 'tearingDown') return cloneResource(old) as Resource<S>;
    return this.#replace(old, { metadata: { ...old.metadata, phase: 'tearingDown' }, spec: old.spec }) as Resource<S>;
  }

  async destroy(namespace: string, type: string, id: string, opts: WriteOptions): Promise<void> {
    checkOwner(opts.owner);
    const old = this.#must({ namespace, type, id });
    if (old.metadata.owner !== opts.owner) throw new OwnerConflictError(old.metadata, old.metadata.owner, opts.owner);
    if (old.metadata.finalizers.length > 0) {
      throw new ConflictError(old.metadata, 'finalizers', `has pending finalizers: ${old.metadata.finalizers.join(', ')}`);
    }
    this.#kinds.get(kindKey(namespace, type))!.delete(id);
    this.#emit({ type: 'destroyed', resource: old });
  }

  async addFinalizer<S = unknown>(namespace: string, type: string, id: string, ...finalizers: string[]): Promise<Resource<S>> {
    checkFinalizers(finalizers);
    const old = this.#must({ namespace, type, id });
    const missing = [...new Set(finalizers)].filter((f) => !old.metadata.finalizers.includes(f));
    if (missing.length === 0) return cloneResource(old) as Resource<S>;
    if (old.metadata.phase !== 'running') throw new PhaseConflictError(old.metadata, old.metadata.phase, 'add finalizers');
    return this.#replace(old, {
      metadata: { ...old.metadata, finalizers: [...old.metadata.finalizers, ...missing] },
      spec: old.spec,
    }) as Resource<S>;
  }

  async removeFinalizer<S = unknown>(namespace: string, type: string, id: string, ...finalizers: string[]): Promise<Resource<S>> {
    checkFinalizers(finalizers);
    const old = this.#must({ namespace, type, id });
    const kept = old.metadata.finalizers.filter((f) => !finalizers.includes(f));
    if (kept.length === old.metadata.finalizers.length) return cloneResource(old) as Resource<S>;
    return this.#replace(old, { metadata: { ...old.metadata, finalizers: kept }, spec: old.spec }) as Resource<S>;
  }

  watch<S = unknown>(namespace: string, type: string, id: string | undefined, opts: WatchOptions): AsyncIterable<WatchEvent<S>> {
    if (id !== undefined) validateRef({ namespace, type, id });
    return this.#watch(namespace, type, id, true, opts.signal) as AsyncIterable<WatchEvent<S>>;
  }

  watchKind<S = unknown>(namespace: string, type: string, opts: WatchKindOptions): AsyncIterable<WatchEvent<S>> {
    return this.#watch(namespace, type, undefined, opts.bootstrap, opts.signal) as AsyncIterable<WatchEvent<S>>;
  }

  #watch(namespace: string, type: string, id: string | undefined, bootstrap: boolean, signal: AbortSignal): Watcher {
    validateRef({ namespace, type, id: id ?? '-' });
    const key = kindKey(namespace, type);
    const what = id === undefined ? `${namespace}/${type}` : refString({ namespace, type, id });
    let set = this.#watchers.get(key);
    const watcher = new Watcher(id, this.#queueSize, what, signal, () => {
      set!.delete(watcher);
      if (set!.size === 0 && this.#watchers.get(key) === set) this.#watchers.delete(key);
    });
    if (watcher.closed) return watcher; // signal already aborted
    // Snapshot and registration happen together, so no write falls between them.
    if (bootstrap) {
      const kind = this.#kinds.get(key);
      const ids = kind ? (id === undefined ? sortedIds(kind) : kind.has(id) ? [id] : []) : [];
      for (const each of ids) watcher.replay({ type: 'created', resource: kind!.get(each)! });
      watcher.replay({ type: 'bootstrapped' });
    }
    if (!set) this.#watchers.set(key, (set = new Set()));
    set.add(watcher);
    return watcher;
  }

  #must(ref: Ref): Resource {
    validateRef(ref);
    const r = this.#kinds.get(kindKey(ref.namespace, ref.type))?.get(ref.id);
    if (!r) throw new NotFoundError(ref);
    return r;
  }

  /** Stores next in place of old with the version bumped; returns a copy. */
  #replace(old: Resource, next: Resource): Resource {
    next.metadata.version = old.metadata.version + 1;
    next.metadata.updated = new Date();
    this.#kinds.get(kindKey(old.metadata.namespace, old.metadata.type))!.set(old.metadata.id, next);
    this.#emit({ type: 'updated', resource: next, old });
    return cloneResource(next);
  }

  #emit(ev: WatchEvent & { resource: Resource }): void {
    const { namespace, type, id } = ev.resource.metadata;
    const set = this.#watchers.get(kindKey(namespace, type));
    if (!set) return;
    for (const w of [...set]) if (w.id === undefined || w.id === id) w.push(ev);
  }
}

function kindKey(namespace: string, type: string): string {
  return `${namespace}\0${type}`;
}

function sortedIds(kind: Map<string, Resource>): string[] {
  return [...kind.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function checkOwner(owner: unknown): void {
  if (typeof owner !== 'string') throw new TypeError('write options: owner must be a string');
}

function checkFinalizers(finalizers: string[]): void {
  if (finalizers.length === 0 || finalizers.some((f) => typeof f !== 'string' || f === '')) {
    throw new TypeError('finalizers must be non-empty strings');
  }
}

/** A deliverable copy of an event that holds stored snapshots. */
function copyEvent(ev: WatchEvent): WatchEvent {
  switch (ev.type) {
    case 'created':
    case 'destroyed':
      return { type: ev.type, resource: cloneResource(ev.resource) };
    case 'updated':
      return { type: 'updated', resource: cloneResource(ev.resource), old: cloneResource(ev.old) };
    default:
      return ev;
  }
}

/**
 * One watch: a bounded queue feeding an async iterator. push never blocks: past `limit`
 * pending live events, the backlog is dropped and replaced by one 'errored' event, after
 * which the iteration ends. Replayed (bootstrap) events do not count against the limit.
 */
class Watcher implements AsyncIterableIterator<WatchEvent> {
  readonly #queue: Array<{ ev: WatchEvent; live: boolean }> = [];
  #live = 0;
  readonly #waiters: Array<(r: IteratorResult<WatchEvent>) => void> = [];
  /** open: receiving; closing: no more pushes, drain the queue; done: iteration over. */
  #phase: 'open' | 'closing' | 'done' = 'open';
  readonly #onAbort = () => this.#finish();

  constructor(
    readonly id: string | undefined,
    private readonly limit: number,
    private readonly what: string,
    private readonly signal: AbortSignal,
    private readonly detach: () => void,
  ) {
    if (signal.aborted) this.#phase = 'done';
    else signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  get closed(): boolean {
    return this.#phase !== 'open';
  }

  replay(ev: WatchEvent): void {
    this.#offer(ev, false);
  }

  push(ev: WatchEvent): void {
    if (this.#phase !== 'open') return;
    if (this.#live >= this.limit) {
      this.#queue.length = 0;
      this.#live = 0;
      this.#close();
      this.#offer({ type: 'errored', error: new WatchOverflowError(this.what, this.limit) }, false);
      return;
    }
    this.#offer(ev, true);
  }

  #offer(ev: WatchEvent, live: boolean): void {
    const waiter = this.#waiters.shift();
    if (waiter) {
      waiter({ value: copyEvent(ev), done: false });
      if (ev.type === 'errored') this.#finish();
      return;
    }
    this.#queue.push({ ev, live });
    if (live) this.#live++;
  }

  /** Stops receiving; what is queued is still delivered. */
  #close(): void {
    if (this.#phase !== 'open') return;
    this.#phase = 'closing';
    this.signal.removeEventListener('abort', this.#onAbort);
    this.detach();
  }

  #finish(): void {
    this.#close();
    this.#phase = 'done';
    this.#queue.length = 0;
    this.#live = 0;
    for (const w of this.#waiters.splice(0)) w({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<WatchEvent>> {
    const item = this.#queue.shift();
    if (item) {
      if (item.live) this.#live--;
      if (item.ev.type === 'errored') this.#finish();
      return Promise.resolve({ value: copyEvent(item.ev), done: false });
    }
    if (this.#phase !== 'open') {
      this.#finish();
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  return(): Promise<IteratorResult<WatchEvent>> {
    this.#finish();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<WatchEvent> {
    return this;
  }
}
