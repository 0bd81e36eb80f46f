// Keeps the resources published through a Publisher equal to a desired set, whatever happens to
// the publisher: changes are applied in the background, in order per resource, and retried with
// backoff while machined cannot be reached. The first flush also destroys resources of the
// mirrored types that a previous run left behind.
import type { Publisher } from '../daemon/publisher.ts';
import { jsonEqual } from '../state/resource.ts';
import type { Logger } from '../lib/log.ts';

type Key = string; // `${type}\0${id}`

export class ResourceMirror {
  /** What should be published. */
  readonly #desired = new Map<Key, unknown>();
  /** What was published (as far as we know). */
  readonly #published = new Map<Key, unknown>();
  readonly #dirty = new Set<Key>();
  #initialized = false;
  #running: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #backoff = 0;
  #stopped = false;
  readonly #idleWaiters: Array<() => void> = [];

  constructor(
    private readonly publisher: Publisher,
    private readonly namespace: string,
    private readonly types: readonly string[],
    private readonly log: Logger,
    private readonly retry = { min: 250, max: 30_000 },
  ) {}

  set(type: string, id: string, spec: unknown): void {
    const key = `${type}\0${id}`;
    const clean = JSON.parse(JSON.stringify(spec)) as unknown;
    if (this.#desired.has(key) && jsonEqual(this.#desired.get(key), clean)) return;
    this.#desired.set(key, clean);
    this.#mark(key);
  }

  delete(type: string, id: string): void {
    const key = `${type}\0${id}`;
    if (!this.#desired.has(key)) return;
    this.#desired.delete(key);
    this.#mark(key);
  }

  /** The desired spec (tests, diagnostics). */
  get(type: string, id: string): unknown {
    return this.#desired.get(`${type}\0${id}`);
  }

  ids(type: string): string[] {
    return [...this.#desired.keys()].filter((k) => k.startsWith(`${type}\0`)).map((k) => k.slice(type.length + 1)).sort();
  }

  /** Begins publishing (the first round removes what an earlier run left). */
  start(): void {
    this.#kick();
  }

  /** Resolves once everything desired so far is published. */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    for (const w of this.#idleWaiters.splice(0)) w();
  }

  #isIdle(): boolean {
    return this.#initialized && this.#dirty.size === 0 && !this.#running;
  }

  #mark(key: Key): void {
    this.#dirty.add(key);
    this.#kick();
  }

  #kick(): void {
    if (this.#stopped || this.#running || this.#timer) return;
    this.#running = this.#flush()
      .then(
        () => {
          this.#backoff = 0;
        },
        (err: unknown) => {
          this.#backoff = Math.min(this.retry.max, this.#backoff ? this.#backoff * 2 : this.retry.min);
          this.log.warn(`publishing devices: ${(err as Error).message}; retrying in ${this.#backoff} ms`);
        },
      )
      .finally(() => {
        this.#running = undefined;
        if (this.#stopped) return;
        if (this.#backoff) {
          this.#timer = setTimeout(() => {
            this.#timer = undefined;
            this.#kick();
          }, this.#backoff);
          this.#timer.unref?.();
        } else if (this.#dirty.size > 0 || !this.#initialized) this.#kick();
        else for (const w of this.#idleWaiters.splice(0)) w();
      });
  }

  async #flush(): Promise<void> {
    if (!this.#initialized) {
      for (const type of this.types) {
        for (const r of await this.publisher.list(this.namespace, type)) {
          const key = `${type}\0${r.metadata.id}`;
          this.#published.set(key, r.spec);
          if (!this.#desired.has(key)) this.#dirty.add(key);
        }
      }
      this.#initialized = true;
    }
    while (this.#dirty.size > 0 && !this.#stopped) {
      const key = this.#dirty.values().next().value as Key;
      const [type, id] = key.split('\0') as [string, string];
      if (this.#desired.has(key)) {
        const spec = this.#desired.get(key);
        if (!(this.#published.has(key) && jsonEqual(this.#published.get(key), spec))) {
          await this.publisher.apply(this.namespace, type, id, spec);
          this.#published.set(key, spec);
        }
      } else if (this.#published.has(key)) {
        await this.publisher.destroy(this.namespace, type, id);
        this.#published.delete(key);
      }
      // Changed again while we were writing? Then it stays dirty for the next round.
      if (this.#desired.has(key) ? jsonEqual(this.#published.get(key), this.#desired.get(key)) : !this.#published.has(key)) this.#dirty.delete(key);
    }
  }
}
