// apid's grpc-js clients for streams to its own daemons (one per unix socket) and for calls to
// other nodes (one per address and certificate generation). A client is held while a call uses
// it; idle clients to other nodes are kept for reuse up to MAX_IDLE_PEER_CLIENTS (the least
// recently used go first), and one whose call failed as a dead node would (UNAVAILABLE,
// DEADLINE_EXCEEDED) is closed, so naming many dead nodes leaves nothing behind.
import * as grpc from '@grpc/grpc-js';

/** Remote clients kept for reuse beyond those in use. */
const MAX_IDLE_PEER_CLIENTS = 64;

/** Codes after which a peer's client is dropped rather than kept (a dead or unreachable node). */
const DEAD_PEER = new Set<number>([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]);

interface PooledClient {
  client: grpc.Client;
  users: number;
}

/** Where a call goes: a daemon's unix socket, or another node's apid. */
export type PoolTarget = { local: true; socket: string } | { local: false; address: string };

export class ClientPool {
  /** By key; the map's order is the order of last use. */
  readonly #clients = new Map<string, PooledClient>();
  #credsGeneration = 0;

  /** `peerCredentials`: this node's client TLS credentials for other nodes, when it has them. */
  constructor(private readonly peerCredentials: () => grpc.ChannelCredentials | undefined) {}

  /** Peer certificates changed: idle clients to other nodes go; the next calls use the new ones. */
  resetPeers(): void {
    this.#credsGeneration++;
    for (const [key, c] of this.#clients) {
      if (!key.startsWith('unix:') && c.users === 0) {
        c.client.close();
        this.#clients.delete(key);
      }
    }
  }

  close(): void {
    for (const c of this.#clients.values()) c.client.close();
    this.#clients.clear();
  }

  /** A client for the target, held until release(code): the call's status code, if it failed. */
  acquire(t: PoolTarget): { client: grpc.Client; release: (code?: number) => void } {
    const key = t.local ? `unix:${t.socket}` : `${t.address}#${this.#credsGeneration}`;
    let entry = this.#clients.get(key);
    if (!entry) {
      let client: grpc.Client;
      if (t.local) client = new grpc.Client(key, grpc.credentials.createInsecure());
      else {
        const creds = this.peerCredentials();
        if (!creds) throw Object.assign(new Error('this node has no certificate to reach other nodes yet'), { code: grpc.status.UNAVAILABLE });
        // A local subchannel pool: closing the client closes its connection (grpc-js's global
        // pool would keep it, connecting to a dead node, until its next sweep).
        client = new grpc.Client(t.address, creds, { 'grpc.enable_channelz': 0, 'grpc.use_local_subchannel_pool': 1 });
      }
      entry = { client, users: 0 };
    } else {
      this.#clients.delete(key); // re-inserted below, as the most recently used
    }
    this.#clients.set(key, entry);
    entry.users++;
    const e = entry;
    let released = false;
    return {
      client: e.client,
      release: (code) => {
        if (released) return;
        released = true;
        e.users--;
        if (e.users === 0 && !t.local && code !== undefined && DEAD_PEER.has(code) && this.#clients.get(key) === e) {
          this.#clients.delete(key);
          e.client.close();
        }
        this.#pruneIdle();
      },
    };
  }

  #pruneIdle(): void {
    let idle = 0;
    for (const [key, c] of this.#clients) if (!key.startsWith('unix:') && c.users === 0) idle++;
    for (const [key, c] of this.#clients) {
      if (idle <= MAX_IDLE_PEER_CLIENTS) break;
      if (key.startsWith('unix:') || c.users > 0) continue;
      this.#clients.delete(key);
      c.client.close();
      idle--;
    }
  }
}
