// The API's calls, typed from the protos: every RPC by its path (`/machine.MachineService/Version`),
// its request and reply types taken from the wire types generated at build time
// (src/contract/wire/rpc-methods.ts, by image-builder/wire-types.ts), so nothing here is written
// per method: a method added to a proto is callable, typed, as soon as `make wire-types` runs.
//
// A service as an object: `client.machine.Version()`, `client.machine.Logs({ id }, opts)`,
// methods named as in the proto. A unary method resolves with its reply; a server stream is an
// async iterable of its messages; a client or bidirectional stream takes an async iterable of
// requests. Replies are the `__Output` form (src/contract/protos.ts's conversions), requests the
// permissive input form.
import { methodInfo } from '../contract/protos.ts';
import type { RpcMethods } from '../contract/wire/rpc-methods.ts';
import type * as grpc from '@grpc/grpc-js';

export interface CallOptions {
  /** Routing metadata from node() / nodes(), and anything else to send. */
  metadata?: grpc.Metadata;
  /** Aborting cancels the call: a stream then simply ends, a unary call rejects with CANCELLED. */
  signal?: AbortSignal;
  deadline?: Date | number;
}

export type RpcPath = keyof RpcMethods;
export type RpcKind = RpcMethods[RpcPath]['kind'];

/** The paths of the methods that stream as `K` says. */
export type PathOf<K extends RpcKind> = { [P in RpcPath]: RpcMethods[P]['kind'] extends K ? P : never }[RpcPath];

/** What may be sent to method P. */
export type RpcRequest<P extends RpcPath> = Parameters<RpcMethods[P]['def']['requestSerialize']>[0];
/** What method P replies (each message, for a stream). */
export type RpcReply<P extends RpcPath> = ReturnType<RpcMethods[P]['def']['responseDeserialize']>;
/** One item of an enveloped reply (`{ messages: [...] }`, one per node). */
export type RpcItem<P extends RpcPath> = RpcReply<P> extends { messages: Array<infer M> } ? M : never;

export type Stream<T> = AsyncGenerator<T, void, undefined>;

type Method<P extends RpcPath> = RpcMethods[P]['kind'] extends 'unary'
  ? (request?: RpcRequest<P>, opts?: CallOptions) => Promise<RpcReply<P>>
  : RpcMethods[P]['kind'] extends 'server-stream'
    ? (request?: RpcRequest<P>, opts?: CallOptions) => Stream<RpcReply<P>>
    : (requests: AsyncIterable<RpcRequest<P>>, opts?: CallOptions) => Stream<RpcReply<P>>;

/** Service S (`machine.MachineService`) as an object: one function per method, named as in the proto. */
export type Service<S extends string> = { readonly [P in RpcPath as P extends `/${S}/${infer M}` ? M : never]: Method<P> };

/** The three ways a call goes, as the Client makes them. */
export interface Caller {
  unary(path: string, request: unknown, opts?: CallOptions): Promise<unknown>;
  serverStream(path: string, request: unknown, opts?: CallOptions): Stream<unknown>;
  bidiStream(path: string, requests: AsyncIterable<unknown>, opts?: CallOptions): Stream<unknown>;
}

/**
 * Service `name` on `caller`. Each method is made when first used, from the protos' method
 * table (whether it streams); a name the service does not have is undefined.
 */
export function service<S extends string>(caller: Caller, name: S): Service<S> {
  const made = new Map<string, unknown>();
  return new Proxy(Object.create(null) as object, {
    get(_target, key) {
      if (typeof key !== 'string') return undefined;
      if (made.has(key)) return made.get(key);
      const path = `/${name}/${key}`;
      const info = methodInfo(path);
      if (!info) return undefined;
      const fn = info.requestStream
        ? (requests: AsyncIterable<unknown>, opts?: CallOptions) => caller.bidiStream(path, requests, opts)
        : info.responseStream
          ? (request: unknown = {}, opts?: CallOptions) => caller.serverStream(path, request, opts)
          : (request: unknown = {}, opts?: CallOptions) => caller.unary(path, request, opts);
      made.set(key, fn);
      return fn;
    },
  }) as Service<S>;
}
