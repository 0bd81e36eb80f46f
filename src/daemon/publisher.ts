// How a daemon publishes what it observes into machined's resource state, and reads its
// inputs from it. Each daemon writes only the resource types it owns (the owner is the
// daemon's name; machined refuses writes to another owner's resources). One implementation,
// StatePublisher, over any State: one in the same process (tests, and machined itself), or
// RemoteState over machined's unix socket (RemotePublisher, src/daemon/remote-publisher.ts).
import type { Resource } from '../state/resource.ts';
import { createOrUpdate } from '../state/apply.ts';
import type { State, WatchEvent } from '../state/state.ts';
import { NotFoundError } from '../state/resource.ts';

export interface Publisher {
  /** Creates or updates `namespace/type/id` with `spec` (no write when the spec is unchanged). */
  apply(namespace: string, type: string, id: string, spec: unknown, labels?: Record<string, string>): Promise<void>;
  /** Removes it; no error when it does not exist. */
  destroy(namespace: string, type: string, id: string): Promise<void>;
  list<S = unknown>(namespace: string, type: string): Promise<Resource<S>[]>;
  /** Current resources first (as 'created', then one 'bootstrapped'), then changes, until the signal aborts. */
  watch<S = unknown>(namespace: string, type: string, signal: AbortSignal): AsyncIterable<WatchEvent<S>>;
}

export class StatePublisher implements Publisher {
  constructor(
    private readonly state: State,
    private readonly owner: string,
  ) {}

  async apply(namespace: string, type: string, id: string, spec: unknown, labels: Record<string, string> = {}): Promise<void> {
    const owner = this.owner;
    await createOrUpdate(
      {
        find: () => this.state.get(namespace, type, id).catch((err) => (err instanceof NotFoundError ? undefined : Promise.reject(err))),
        create: (r) => this.state.create(r, { owner }),
        update: (r) => this.state.update(r, { owner }),
      },
      { namespace, type, id },
      spec,
      { labels },
    );
  }

  async destroy(namespace: string, type: string, id: string): Promise<void> {
    try {
      await this.state.destroy(namespace, type, id, { owner: this.owner });
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }

  list<S = unknown>(namespace: string, type: string): Promise<Resource<S>[]> {
    return this.state.list<S>(namespace, type);
  }

  watch<S = unknown>(namespace: string, type: string, signal: AbortSignal): AsyncIterable<WatchEvent<S>> {
    return this.state.watchKind<S>(namespace, type, { signal, bootstrap: true });
  }
}
