// A concurrency limit for async work: at most `limit` tasks run at once, the others wait in
// the order they came. Small enough to keep here rather than take a dependency for it.
export class Limiter {
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new Error(`a concurrency limit must be at least 1 (got ${limit})`);
  }

  get running(): number {
    return this.#running;
  }

  /** Resolves when a slot is free; the caller must call the returned release once. */
  acquire(): Promise<() => void> {
    return new Promise((resolve) => {
      const start = () => {
        this.#running++;
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          this.#running--;
          this.#waiting.shift()?.();
        });
      };
      if (this.#running < this.limit) start();
      else this.#waiting.push(start);
    });
  }

  /** Runs fn in a slot. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }
}
