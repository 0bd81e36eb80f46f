// The Bronze API client: mTLS gRPC to apid (:50000) with Talos's endpoint semantics. Several
// endpoints are one logical API: a call goes to one of them (the first call picks one at random,
// later calls stay on the one that last answered) and fails over to the next when it is
// UNAVAILABLE (refused, unreachable, TLS failure). The server certificate must name the
// endpoint's host (an IP SAN for an address), as Node's TLS checks it.
//
// Node routing is the caller's choice per call, through metadata (./metadata.ts): none → the
// endpoint answers itself; `node` → one node; `nodes` → fan-out.
//
// The calls are typed from the protos (./rpc.ts): `client.machine.Version()`, or by path,
// `client.unary('/machine.MachineService/Version', {})`.
import * as grpc from '@grpc/grpc-js';
import { serviceDefinition } from '../contract/protos.ts';
import { parseEndpoint, type Endpoint } from './endpoint.ts';
import { RpcError, toRpcError } from './errors.ts';
import { diagnoseServerCertificate, isServerVerifyFailure } from './tls-diagnosis.ts';
import { service, type CallOptions, type PathOf, type RpcReply, type RpcRequest, type Service, type Stream } from './rpc.ts';
import { StateAPI } from './state.ts';

export type { CallOptions } from './rpc.ts';

export interface ConnectOptions {
  /** One or more endpoints: host, host:port, [ipv6]:port. */
  endpoints: string[];
  /** PEM: the OS CA that issued the servers' certificates, the client certificate and its key. */
  ca?: string;
  crt?: string;
  key?: string;
  /**
   * Maintenance mode: TLS without a client certificate and without verifying the server (the node
   * has no identity yet). Only for apply-config to a fresh node.
   */
  insecure?: boolean;
  /** Port for endpoints that name none (default 50000). */
  defaultPort?: number;
  /** Picks the first endpoint (tests pass a fixed one); default Math.random. */
  random?: () => number;
  channelOptions?: grpc.ChannelOptions;
}

type MethodDef = grpc.MethodDefinition<unknown, unknown>;

/** Messages of a bidi stream written but not yet sent, at most. */
const BIDI_IN_FLIGHT = 4;

const methods = new Map<string, MethodDef>();

function method(path: string): MethodDef {
  let def = methods.get(path);
  if (def) return def;
  const m = /^\/([^/]+)\/([^/]+)$/.exec(path);
  if (!m) throw new Error(`bad method path ${path}`);
  def = serviceDefinition(m[1]!)[m[2]!] as MethodDef | undefined;
  if (!def) throw new Error(`unknown method ${path}`);
  methods.set(path, def);
  return def;
}

export class Client {
  readonly endpoints: readonly Endpoint[];
  /** machine.MachineService: unary replies are envelopes, one item per node, errors in item metadata. */
  readonly machine: Service<'machine.MachineService'> = service(this, 'machine.MachineService');
  /** machine.ImageService: replies carry no node metadata, so each call targets one node. */
  readonly image: Service<'machine.ImageService'> = service(this, 'machine.ImageService');
  readonly time: Service<'time.TimeService'> = service(this, 'time.TimeService');
  readonly inspect: Service<'inspect.InspectService'> = service(this, 'inspect.InspectService');
  /** cosi.resource.State as it is (its replies carry no node metadata: target one node per call). */
  readonly cosi: Service<'cosi.resource.State'> = service(this, 'cosi.resource.State');
  /** Resource reads on cosi.resource.State, as COSI's client makes them (./state.ts). */
  readonly state: StateAPI = new StateAPI(this);
  readonly #creds: grpc.ChannelCredentials;
  readonly #channelOptions: grpc.ChannelOptions;
  readonly #clients = new Map<number, grpc.Client>();
  /** The CA the servers must be signed by (mTLS), to explain a refused server certificate. */
  readonly #ca: string | undefined;
  /** Index of the endpoint the next call tries first. */
  #current: number;

  constructor(opts: ConnectOptions) {
    if (opts.endpoints.length === 0) throw new Error('no endpoints: pass --endpoints or set them in the client config');
    this.endpoints = opts.endpoints.map((e) => parseEndpoint(e, opts.defaultPort));
    if (opts.insecure) {
      this.#creds = grpc.credentials.createSsl(null, null, null, { rejectUnauthorized: false, checkServerIdentity: () => undefined });
      this.#ca = undefined;
    } else {
      if (!opts.ca || !opts.crt || !opts.key) throw new Error('mTLS needs the CA certificate, the client certificate and its key');
      this.#creds = grpc.credentials.createSsl(Buffer.from(opts.ca), Buffer.from(opts.key), Buffer.from(opts.crt));
      this.#ca = opts.ca;
    }
    this.#channelOptions = { 'grpc.max_receive_message_length': 64 << 20, ...opts.channelOptions };
    this.#current = Math.min(this.endpoints.length - 1, Math.floor((opts.random ?? Math.random)() * this.endpoints.length));
  }

  /** The endpoint (as written) that answered the last call, or the one the next call tries first. */
  get currentEndpoint(): string {
    return this.endpoints[this.#current]!.raw;
  }

  #client(i: number): grpc.Client {
    let c = this.#clients.get(i);
    if (!c) this.#clients.set(i, (c = new grpc.Client(this.endpoints[i]!.address, this.#creds, this.#channelOptions)));
    return c;
  }

  /** Endpoint indexes in the order a call tries them. */
  #order(): number[] {
    const n = this.endpoints.length;
    return Array.from({ length: n }, (_, k) => (this.#current + k) % n);
  }

  /**
   * A refused server certificate, explained: Node says only "self-signed certificate in
   * certificate chain" both for a node in maintenance mode and for another cluster's node.
   */
  async #explained(err: RpcError, i: number): Promise<RpcError> {
    if (err.code !== grpc.status.UNAVAILABLE || !this.#ca || !isServerVerifyFailure(err.details)) return err;
    const why = await diagnoseServerCertificate(this.endpoints[i]!, this.#ca);
    return why ? new RpcError(err.code, why, err.endpoint) : err;
  }

  #callOptions(opts: CallOptions): grpc.CallOptions {
    return opts.deadline !== undefined ? { deadline: opts.deadline } : {};
  }

  /** A unary call, failing over to the next endpoint on UNAVAILABLE. Rejects with RpcError. */
  unary<P extends PathOf<'unary'>>(path: P, request: RpcRequest<P>, opts?: CallOptions): Promise<RpcReply<P>>;
  unary(path: string, request: unknown, opts?: CallOptions): Promise<unknown>;
  async unary<Res>(path: string, request: unknown, opts: CallOptions = {}): Promise<Res> {
    const def = method(path);
    let last: RpcError | undefined;
    for (const i of this.#order()) {
      const ep = this.endpoints[i]!.raw;
      if (opts.signal?.aborted) throw new RpcError(grpc.status.CANCELLED, 'canceled', ep);
      try {
        const res = await new Promise<Res>((resolve, reject) => {
          const cancel = () => call.cancel();
          const call = this.#client(i).makeUnaryRequest(
            def.path,
            def.requestSerialize,
            def.responseDeserialize,
            request,
            opts.metadata?.clone() ?? new grpc.Metadata(),
            this.#callOptions(opts),
            (err, value) => {
              opts.signal?.removeEventListener('abort', cancel);
              if (err) reject(err);
              else resolve(value as Res);
            },
          );
          opts.signal?.addEventListener('abort', cancel, { once: true });
        });
        this.#current = i;
        return res;
      } catch (e) {
        last = await this.#explained(toRpcError(e, ep), i);
        if (last.code !== grpc.status.UNAVAILABLE) throw last;
      }
    }
    throw last!;
  }

  /**
   * A server-streaming call as an async iterable. It fails over to the next endpoint on
   * UNAVAILABLE before the first message; an aborted signal ends the iteration without error;
   * leaving the loop early cancels the call.
   */
  serverStream<P extends PathOf<'server-stream'>>(path: P, request: RpcRequest<P>, opts?: CallOptions): Stream<RpcReply<P>>;
  serverStream(path: string, request: unknown, opts?: CallOptions): Stream<unknown>;
  async *serverStream<Res>(path: string, request: unknown, opts: CallOptions = {}): Stream<Res> {
    const def = method(path);
    const order = this.#order();
    for (const [k, i] of order.entries()) {
      const ep = this.endpoints[i]!.raw;
      if (opts.signal?.aborted) return;
      const call = this.#client(i).makeServerStreamRequest(
        def.path,
        def.requestSerialize,
        def.responseDeserialize,
        request,
        opts.metadata?.clone() ?? new grpc.Metadata(),
        this.#callOptions(opts),
      );
      const cancel = () => call.cancel();
      opts.signal?.addEventListener('abort', cancel, { once: true });
      let received = false;
      let done = false;
      try {
        for await (const msg of call) {
          if (!received) {
            received = true;
            this.#current = i;
          }
          yield msg as Res;
        }
        done = true;
        this.#current = i;
        return;
      } catch (e) {
        done = true;
        if (opts.signal?.aborted) return;
        const err = await this.#explained(toRpcError(e, ep), i);
        if (!received && err.code === grpc.status.UNAVAILABLE && k < order.length - 1) continue;
        throw err;
      } finally {
        opts.signal?.removeEventListener('abort', cancel);
        if (!done) call.cancel();
      }
    }
  }

  /**
   * The index of the first endpoint, in the usual order, whose channel connects: a stream that
   * uploads cannot be replayed on another endpoint once it has started, so it picks a live one
   * first. None connects: the first in order (the call then fails with gRPC's own reason).
   * Undefined when the signal aborts meanwhile.
   */
  async #connected(opts: CallOptions): Promise<number | undefined> {
    const order = this.#order();
    for (const i of order) {
      const channel = this.#client(i).getChannel();
      const ok = await new Promise<boolean>((resolve) => {
        const deadline = Date.now() + 20_000;
        const check = (): void => {
          const state = channel.getConnectivityState(true);
          if (state === grpc.connectivityState.READY) return resolve(true);
          if (state === grpc.connectivityState.TRANSIENT_FAILURE || state === grpc.connectivityState.SHUTDOWN || opts.signal?.aborted) return resolve(false);
          channel.watchConnectivityState(state, deadline, (err) => (err ? resolve(false) : check()));
        };
        check();
      });
      if (opts.signal?.aborted) return undefined;
      if (ok) {
        this.#current = i;
        return i;
      }
    }
    return order[0]!;
  }

  /**
   * A bidirectional stream: `requests` are sent as the server takes them (the next one is
   * pulled only when the call can take more), the replies are yielded. It goes to the first
   * endpoint that connects and is not retried elsewhere (what was sent cannot be replayed).
   * An error reading `requests` cancels the call and is thrown as it is; an aborted signal
   * ends the iteration without error; leaving the loop early cancels the call.
   */
  bidiStream<P extends PathOf<'bidi' | 'client-stream'>>(path: P, requests: AsyncIterable<RpcRequest<P>>, opts?: CallOptions): Stream<RpcReply<P>>;
  bidiStream(path: string, requests: AsyncIterable<unknown>, opts?: CallOptions): Stream<unknown>;
  async *bidiStream<Req, Res>(path: string, requests: AsyncIterable<Req>, opts: CallOptions = {}): Stream<Res> {
    const def = method(path);
    const i = await this.#connected(opts);
    if (i === undefined) return;
    const ep = this.endpoints[i]!.raw;
    const call = this.#client(i).makeBidiStreamRequest(def.path, def.requestSerialize, def.responseDeserialize, opts.metadata?.clone() ?? new grpc.Metadata(), this.#callOptions(opts));
    const cancel = () => call.cancel();
    opts.signal?.addEventListener('abort', cancel, { once: true });
    let over = false;
    const ended = new Promise<void>((resolve) => call.once('status', () => ((over = true), resolve())));
    let sendError: { error: unknown } | undefined;
    void (async () => {
      // At most a few messages handed to grpc-js and not yet written out: the next request is
      // pulled only when the connection has taken the oldest (so an upload's progress is what
      // left, not what was buffered, and memory stays small).
      const inFlight: Array<Promise<void>> = [];
      for await (const req of requests) {
        if (over) return;
        inFlight.push(new Promise<void>((resolve) => call.write(req, () => resolve())));
        if (inFlight.length >= BIDI_IN_FLIGHT) await Promise.race([inFlight.shift()!, ended]);
      }
      if (!over) call.end();
    })().catch((error: unknown) => {
      sendError = { error };
      call.cancel();
    });
    let done = false;
    try {
      for await (const msg of call) yield msg as Res;
      done = true;
    } catch (e) {
      done = true;
      if (sendError) throw sendError.error;
      if (opts.signal?.aborted) return;
      throw await this.#explained(toRpcError(e, ep), i);
    } finally {
      opts.signal?.removeEventListener('abort', cancel);
      if (!done) call.cancel();
    }
    if (sendError) throw sendError.error;
  }

  close(): void {
    for (const c of this.#clients.values()) c.close();
    this.#clients.clear();
  }
}

/** Connects (lazily: the first call dials) to the API at `endpoints`. */
export function connect(opts: ConnectOptions): Client {
  return new Client(opts);
}
