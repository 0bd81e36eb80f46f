// Containers and Stats: Talos lists the containers of a containerd namespace and their usage.
// A Bronze node has no container runtime, so both answer, for any namespace and driver, one
// reply with an empty list (a Talos client then shows no containers, as on a node without
// any); bronzectl says why.
import type * as grpc from '@grpc/grpc-js';
import { unary } from './common.ts';

export function containersHandlers(): Record<string, grpc.handleUnaryCall<any, any>> {
  return {
    Containers: unary(() => ({ messages: [{ containers: [] }] })),
    Stats: unary(() => ({ messages: [{ stats: [] }] })),
  };
}
