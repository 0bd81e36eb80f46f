// Which node(s) a call is for, as gRPC metadata apid routes on (as Talos's client.WithNode /
// client.WithNodes): `node` names one node (the reply is that node's alone), `nodes` fans out to
// several, one metadata value per node, every reply item stamped with its node. A node is named
// by its hostname or IP address, never with a port (apid dials the API port, and refuses a
// port): such a name throws NodeNameError here, before anything is sent.
import * as grpc from '@grpc/grpc-js';
import { nodeHost } from '../lib/node-name.ts';

/** Metadata targeting one node (key `node`). */
export function node(name: string, md = new grpc.Metadata()): grpc.Metadata {
  if (!name) throw new Error('node: empty node name');
  nodeHost(name);
  md.remove('nodes');
  md.set('node', name);
  return md;
}

/** Metadata fanning out to every node given (key `nodes`, one value each); none: no routing. */
export function nodes(names: readonly string[], md = new grpc.Metadata()): grpc.Metadata {
  md.remove('node');
  md.remove('nodes');
  for (const n of names) {
    if (!n) throw new Error('nodes: empty node name');
    nodeHost(n);
    md.add('nodes', n);
  }
  return md;
}
