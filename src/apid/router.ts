// Where a call goes, from its gRPC metadata, as Talos's apid does:
//   no `node`/`nodes`      → this node's local daemon (reply passed through as is)
//   `node: X`              → X only (this node when X names it: its hostname, one of its
//                            addresses, or loopback), reply stamped with X
//   `nodes: X, Y, ...`     → every listed node in parallel, replies stamped and merged
// Every value names a node (a hostname or an IP address), never a port: other nodes are always
// dialled on the API port (src/lib/node-name.ts), and a value with a port is refused before
// any connection is made.
import os from 'node:os';
import type * as grpc from '@grpc/grpc-js';
import { splitHostPort } from '../lib/hostport.ts';
import { NodeNameError, nodeAddress, nodeHost } from '../lib/node-name.ts';

export { splitHostPort };

export type Route = { kind: 'local' } | { kind: 'one'; target: string } | { kind: 'many'; targets: string[] };

export class RouteError extends Error {}

function values(md: grpc.Metadata, key: string): string[] {
  const raw = md.get(key);
  if (raw.length === 0) return []; // the common case: no routing metadata
  return raw
    .flatMap((v) => String(v).split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** Refuses a value that does not name a node (one with a port, or no hostname or IP). */
function checked(names: string[]): string[] {
  for (const n of names) {
    try {
      nodeHost(n);
    } catch (err) {
      if (err instanceof NodeNameError) throw new RouteError(err.message);
      throw err;
    }
  }
  return names;
}

/**
 * Where another node's apid is dialled: its host on the API port, as a grpc-js target with the
 * `dns:` scheme spelled out, so that a node named like a grpc-js scheme (`unix`: the target
 * "unix:50000" is the socket ./50000) is still a host name and never a socket path.
 */
export function peerTarget(name: string, port: number): string {
  return `dns:${nodeAddress(nodeHost(name), port)}`;
}

/** The route of a call; throws RouteError (the caller's mistake) for bad routing metadata. */
export function routeOf(md: grpc.Metadata): Route {
  const nodes = checked(values(md, 'nodes'));
  const node = checked(values(md, 'node'));
  if (nodes.length && node.length) throw new RouteError('both "node" and "nodes" metadata given; use one');
  if (node.length > 1) throw new RouteError(`"node" names ${node.length} nodes; use "nodes" for several`);
  if (node.length === 1) return { kind: 'one', target: node[0]! };
  if (nodes.length) return { kind: 'many', targets: [...new Set(nodes)] };
  return { kind: 'local' };
}

export class SelfIdentity {
  constructor(private readonly extraAddresses: () => string[] = () => []) {}

  names(): Set<string> {
    const out = new Set<string>(['localhost', '127.0.0.1', '::1', os.hostname()]);
    for (const addrs of Object.values(os.networkInterfaces())) for (const a of addrs ?? []) out.add(a.address);
    for (const a of this.extraAddresses()) out.add(a);
    return out;
  }

  /** Whether a node name (as routeOf passes it: no port) names this node. */
  isSelf(target: string): boolean {
    let host: string;
    try {
      host = nodeHost(target);
    } catch {
      return false;
    }
    return this.names().has(host);
  }
}
