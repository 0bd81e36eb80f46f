// A rate limit per key (a caller's certificate key, a peer address): a token bucket each, of
// `burst` tokens refilled one every `refillMs`. The map of buckets is bounded: a bucket that
// has refilled completely is the same as no bucket and is dropped, and past `maxKeys` the
// oldest buckets go first, so a flood of distinct keys costs memory only up to the bound.
export interface RateLimitOptions {
  /** Calls allowed at once, from a full bucket. */
  burst: number;
  /** One more call allowed every refillMs. */
  refillMs: number;
  /** Buckets kept at most (default 10,000). */
  maxKeys?: number;
  /** The clock (tests). */
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;
  readonly #maxKeys: number;

  constructor(readonly o: RateLimitOptions) {
    if (!(o.burst >= 1) || !(o.refillMs > 0)) throw new Error(`a rate limit needs burst >= 1 and refillMs > 0 (got ${o.burst}, ${o.refillMs})`);
    this.#now = o.now ?? Date.now;
    this.#maxKeys = o.maxKeys ?? 10_000;
  }

  /** The bucket of `key` as of now (refilled), without taking from it. */
  #current(key: string): Bucket {
    const now = this.#now();
    const b = this.#buckets.get(key);
    if (!b) return { tokens: this.o.burst, at: now };
    const refilled = Math.min(this.o.burst, b.tokens + (now - b.at) / this.o.refillMs);
    return { tokens: refilled, at: now };
  }

  /** Whether `key` may make a call now; when it may, the call is counted. */
  take(key: string): boolean {
    const b = this.#current(key);
    if (b.tokens < 1) {
      this.#buckets.set(key, b);
      return false;
    }
    b.tokens -= 1;
    this.#set(key, b);
    return true;
  }

  /** Whether `key` has calls left (nothing counted). */
  allows(key: string): boolean {
    return this.#current(key).tokens >= 1;
  }

  /** Counts a call of `key` whether or not it had calls left (e.g. a failure). */
  charge(key: string): void {
    const b = this.#current(key);
    b.tokens = Math.max(0, b.tokens - 1);
    this.#set(key, b);
  }

  /** Milliseconds until `key` may call again (0: now). */
  retryAfterMs(key: string): number {
    const b = this.#current(key);
    return b.tokens >= 1 ? 0 : Math.ceil((1 - b.tokens) * this.o.refillMs);
  }

  get size(): number {
    return this.#buckets.size;
  }

  #set(key: string, b: Bucket): void {
    this.#buckets.delete(key); // re-inserted last: the map's order is the age of the last use
    this.#buckets.set(key, b);
    if (this.#buckets.size <= this.#maxKeys) return;
    // Full buckets first (they are the same as none), then the least recently used.
    const now = this.#now();
    for (const [k, v] of this.#buckets) {
      if (this.#buckets.size <= this.#maxKeys) return;
      if (v.tokens + (now - v.at) / this.o.refillMs >= this.o.burst) this.#buckets.delete(k);
    }
    for (const k of this.#buckets.keys()) {
      if (this.#buckets.size <= this.#maxKeys) return;
      this.#buckets.delete(k);
    }
  }
}
