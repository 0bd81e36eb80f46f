// The Publisher a daemon uses in production: StatePublisher (./publisher.ts) over RemoteState
// (./remote-state.ts), machined's cosi.resource.State over its unix socket, naming the daemon
// as owner (machined allows it the types whose definition names it owner, see
// src/contract/resources/). The socket has one client, RemoteState; this adds only the owner.
import { socketPath } from '../contract/paths.ts';
import { StatePublisher } from './publisher.ts';
import { RemoteState } from './remote-state.ts';

export class RemotePublisher extends StatePublisher {
  readonly #state: RemoteState;

  constructor(owner: string, socket = socketPath('machined'), timeoutMs = 10_000) {
    const state = new RemoteState({ socket, timeoutMs });
    super(state, owner);
    this.#state = state;
  }

  close(): void {
    this.#state.close();
  }
}
