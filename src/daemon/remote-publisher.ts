// The Publisher a daemon uses in production: StatePublisher (./publisher.ts) over RemoteState
// (./remote-state.ts), machined's cosi.resource.State over its unix socket, naming the daemon
// as owner (machined allows it the types whose definition names it owner, see
// src/contract/resources/). The socket has one client, RemoteState.
//
// A daemon is the only writer of the resources it publishes (machined refuses every other
// owner's writes to them), so it remembers what it last wrote and skips the read that
// create-or-update starts with: a resource it has written is updated directly, or not at all
// when the spec and labels are unchanged, and one it has not is created directly. Only when
// that fails because the resource is not as remembered (an earlier run of the daemon created it,
// or it is gone) does it read and write as StatePublisher does. At boot that is half the calls
// on machined's socket, and no NOT_FOUND answer (an error, with its stack, on both sides) for
// every first publication.
import { socketPath } from '../contract/paths.ts';
import { createOrUpdate, unchanged } from '../state/apply.ts';
import { ConflictError, NotFoundError, newResource, type Resource } from '../state/resource.ts';
import { StatePublisher } from './publisher.ts';
import { RemoteState } from './remote-state.ts';

export class RemotePublisher extends StatePublisher {
  readonly #state: RemoteState;
  readonly #owner: string;
  /** What this publisher last wrote (or read) of each resource, by namespace/type/id. */
  readonly #written = new Map<string, Resource<unknown>>();

  constructor(owner: string, socket = socketPath('machined'), timeoutMs = 10_000) {
    const state = new RemoteState({ socket, timeoutMs });
    super(state, owner);
    this.#state = state;
    this.#owner = owner;
  }

  override async apply(namespace: string, type: string, id: string, spec: unknown, labels: Record<string, string> = {}): Promise<void> {
    const key = `${namespace}\u0000${type}\u0000${id}`;
    const owner = this.#owner;
    const known = this.#written.get(key);
    if (known && unchanged(known, spec, labels)) return;
    try {
      const stored = known
        ? await this.#state.update({ metadata: { ...known.metadata, labels: { ...labels } }, spec }, { owner })
        : await this.#state.create(newResource(namespace, type, id, spec, { labels: { ...labels } }), { owner });
      this.#written.set(key, stored);
      return;
    } catch (err) {
      this.#written.delete(key);
      if (!(err instanceof NotFoundError) && !(err instanceof ConflictError && err.reason === 'exists')) throw err;
    }
    const stored = await createOrUpdate(
      {
        find: () => this.#state.get(namespace, type, id).catch((err) => (err instanceof NotFoundError ? undefined : Promise.reject(err))),
        create: (r) => this.#state.create(r, { owner }),
        update: (r) => this.#state.update(r, { owner }),
      },
      { namespace, type, id },
      spec,
      { labels },
    );
    if (stored) this.#written.set(key, stored);
  }

  override async destroy(namespace: string, type: string, id: string): Promise<void> {
    this.#written.delete(`${namespace}\u0000${type}\u0000${id}`);
    await super.destroy(namespace, type, id);
  }

  close(): void {
    this.#state.close();
  }
}
