// Where a call goes, from its gRPC metadata, as Talos's apid does:
//   no `node`/`nodes`      → this node's local daemon (reply passed through as is)
//   `node: X`              → X only (this node when X names it: its hostname, one of its
//                            addresses, or loopback), reply stamped with X
//   `nodes: X, Y, ...`     → every listed node in parallel, replies stamped and merged
import os from 'node:os';
import type * as grpc from '@grpc/grpc-js';
import { splitHostPort } from '../lib/hostport.ts';

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

export function routeOf(md: grpc.Metadata): Route {
  const nodes = values(md, 'nodes');
  const node = values(md, 'node');
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

  isSelf(target: string): boolean {
    const { host } = splitHostPort(target);
    return this.names().has(host);
  }
}
