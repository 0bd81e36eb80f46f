// apid's proxy: every routable RPC is served with raw bytes in and out (apid never needs to
// decode a request or a reply), authorized against the RBAC table, then routed to this node's
// daemon over its unix socket, to one other node's apid, or to many nodes at once with each
// reply stamped with its node's metadata so one failing node never hides the others.
//
// Only replies that have room for that metadata are stamped, and only they fan out: which
// they are is read from the proto descriptors (src/contract/envelope.ts). COSI State's replies
// have none and pass through `node` routing untouched.
//
// Streams are relayed with backpressure both ways: an upstream is paused while the caller
// cannot take more, so a fast daemon (a recursive List of "/") never piles up in apid.
// A `nodes` fan-out runs at most fanoutConcurrency calls at once, and the whole fan-out ends
// within one per-node deadline (fanoutTimeoutMs, or the caller's own deadline if sooner):
// a node's call starts when a slot is free and ends at that deadline at the latest, and nodes
// that get no slot before it are reported as DEADLINE_EXCEEDED; so 500 dead nodes cost one
// deadline, not 500. Server streams hold a slot only while they connect.
// Bidirectional streams (UpgradeStream: an upload one way, progress the other) go to exactly
// one node; client-streaming-only RPCs (none yet) are not routed. Unary calls to this node's
// daemons, the common case, go through src/apid/local.ts (plain HTTP/2 on the unix socket),
// everything else through grpc-js clients; the caller's roles are read once per TLS
// connection (ConnectionRoles).
import { ClientPool } from './client-pool.ts';
import { connectMachined } from './connect-machined.ts';
import * as grpc from '@grpc/grpc-js';
import { type ReplyShape } from '../contract/envelope.ts';
import { methodsOf } from '../contract/protos.ts';
import { Limiter } from '../lib/limit.ts';
import type { Logger } from '../lib/log.ts';
import { LOCAL_BACKENDS, localSocketFor } from './backends.ts';
import { ConnectionRoles, ROLES_METADATA, authorize, type AuthError } from './authz.ts';
import { LocalChannel } from './local.ts';
import { MAINTENANCE_ROLE, maintenanceAuthorize } from './maintenance.ts';
import { RouteError, peerTarget, routeOf, type Route, type SelfIdentity } from './router.ts';
import { errorEnvelope, errorMessage, stampEnvelope, stampMessage } from './wire.ts';

const raw = (b: Buffer) => b;
/** A method machined serves (backends.ts), for its channel. */
const MACHINED_METHOD = '/cosi.resource.State/Get';

/** What apid reads from any incoming call: its metadata and TLS peer. */
export type SurfaceCall = Pick<grpc.ServerUnaryCall<unknown, unknown>, 'metadata' | 'getAuthContext' | 'getPeer'>;

export interface ProxyOptions {
  self: SelfIdentity;
  /**
   * The API port every other node is dialled on (50000; host tests, whose nodes share one
   * host, set another for the whole apid). `node` metadata never names a port.
   */
  peerPort: number;
  /** TLS credentials towards other nodes' apid (apid's own client certificate). */
  peerCredentials: () => grpc.ChannelCredentials | undefined;
  log: Logger;
  /** Per-node deadline of a `nodes` fan-out (the whole fan-out ends within it). Default 30 s. */
  fanoutTimeoutMs?: number;
  /** Calls of one fan-out in flight at once (server streams: while they connect). Default 32. */
  fanoutConcurrency?: number;
  /**
   * Authentication of the caller: the verified peer certificate (mTLS) → roles. Maintenance
   * mode swaps this for its own rule.
   */
  authenticate?: (call: SurfaceCall) => readonly string[] | AuthError;
  /** True while the node has no configuration (src/apid/maintenance.ts). */
  maintenance?: () => boolean;
}

type Target = { name: string; local: boolean; address: string };

interface UpstreamError {
  code: number;
  details: string;
}

function asUpstreamError(err: unknown): UpstreamError {
  const e = err as Partial<grpc.ServiceError>;
  return { code: e.code ?? grpc.status.UNKNOWN, details: e.details || e.message || String(err) };
}

function deadlineMs(d: grpc.Deadline): number {
  const n = d instanceof Date ? d.getTime() : Number(d);
  return Number.isFinite(n) ? n : Infinity;
}

function deadlineError(t: Target): UpstreamError {
  return { code: grpc.status.DEADLINE_EXCEEDED, details: `${t.name}: not reached before the fan-out's deadline` };
}

export class ApiProxy {
  /** grpc-js clients: one per local socket (streams) and per other node (client-pool.ts). */
  private readonly clients: ClientPool;
  /** Unary calls to this node's daemons: one channel per socket (src/apid/local.ts), found by method. */
  private readonly locals = new Map<string, LocalChannel>();
  private readonly localByMethod = new Map<string, LocalChannel>();
  private readonly connectionRoles = new ConnectionRoles();
  private closing = false;

  constructor(private readonly o: ProxyOptions) {
    this.clients = new ClientPool(() => o.peerCredentials());
  }

  /** Connects to machined before the first call needs it (connect-machined.ts). */
  connectMachined(o: { everyMs?: number; forMs?: number } = {}): Promise<boolean> {
    return connectMachined(this.local(MACHINED_METHOD), () => this.closing, o);
  }

  /** Peer certificates changed: drop the clients so the next calls use the new ones. */
  resetPeers(): void {
    this.clients.resetPeers();
  }

  close(): void {
    this.closing = true;
    this.clients.close();
    for (const l of this.locals.values()) l.close();
    this.locals.clear();
    this.localByMethod.clear();
  }

  /** Service definitions with raw (Buffer) serializers and their proxy handlers. */
  services(): Array<{ definition: grpc.ServiceDefinition; implementation: grpc.UntypedServiceImplementation }> {
    return Object.keys(LOCAL_BACKENDS).map((name) => {
      // Raw bytes both ways: apid routes without decoding, so it needs only each method's shape.
      const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
      const implementation: grpc.UntypedServiceImplementation = {};
      for (const def of methodsOf(name)) {
        const method = def.name;
        // A client-streaming RPC (EtcdRecover) is routed as a bidi stream: on the wire they are
        // the same, the backend's one reply is relayed as the stream's one message.
        definition[method] = {
          path: def.path,
          requestStream: def.requestStream,
          responseStream: def.responseStream || def.requestStream,
          originalName: method.charAt(0).toLowerCase() + method.slice(1),
          requestSerialize: raw,
          requestDeserialize: raw,
          responseSerialize: raw,
          responseDeserialize: raw,
        };
        const shape = def.reply;
        implementation[method] = def.requestStream
          ? this.bidiHandler(def.path, shape)
          : def.responseStream
            ? this.streamHandler(def.path, shape)
            : this.unaryHandler(def.path, shape);
      }
      return { definition, implementation };
    });
  }

  private authenticate(call: SurfaceCall): readonly string[] | AuthError {
    if (this.o.authenticate) return this.o.authenticate(call);
    return this.connectionRoles.rolesOf(call);
  }

  /**
   * Checks the caller and resolves the route; returns an error to send instead. `single`:
   * the RPC answers for one node only (bidi streams): `nodes` naming one node is taken as
   * `node`, naming several is refused. A reply without room for node metadata ('plain')
   * never fans out either.
   */
  private admit(path: string, call: SurfaceCall, shape: ReplyShape, single = false): { roles: readonly string[]; targets: Target[]; mode: 'local' | 'one' | 'many' } | AuthError {
    if (this.o.maintenance?.()) {
      const refused = maintenanceAuthorize(path);
      if (refused) return refused;
      const route = this.route(call);
      if ('code' in route) return route;
      if (route.kind === 'many' || (route.kind === 'one' && !this.o.self.isSelf(route.target))) {
        return { code: grpc.status.FAILED_PRECONDITION, details: 'in maintenance mode a node answers only for itself' };
      }
      return { roles: [MAINTENANCE_ROLE], mode: 'local', targets: [this.target('', true)] };
    }
    const roles = this.authenticate(call);
    if ('code' in roles) return roles;
    const denied = authorize(path, roles);
    if (denied) return denied;
    const route = this.route(call);
    if ('code' in route) return route;
    if (route.kind === 'local') return { roles, mode: 'local', targets: [this.target('', true)] };
    if (route.kind === 'one') return { roles, mode: 'one', targets: [this.target(route.target)] };
    if (single || shape === 'plain') {
      if (route.targets.length === 1) return { roles, mode: 'one', targets: [this.target(route.targets[0]!)] };
      return {
        code: grpc.status.INVALID_ARGUMENT,
        details: single
          ? `${path} streams to one node at a time, but "nodes" names ${route.targets.length} (${route.targets.join(', ')}): target one node with "node"`
          : `${path} answers for one node at a time (its replies do not say which node answered): use "node", not "nodes"`,
      };
    }
    return { roles, mode: 'many', targets: route.targets.map((t) => this.target(t)) };
  }

  /** The call's route, or INVALID_ARGUMENT for routing metadata that names no node (router.ts). */
  private route(call: SurfaceCall): Route | AuthError {
    try {
      return routeOf(call.metadata);
    } catch (err) {
      if (err instanceof RouteError) return { code: grpc.status.INVALID_ARGUMENT, details: err.message };
      throw err;
    }
  }

  /** A named node: this one, or another dialled on the API port (names carry no port: routeOf). */
  private target(name: string, forceLocal = false): Target {
    if (forceLocal || this.o.self.isSelf(name)) return { name, local: true, address: '' };
    return { name, local: false, address: peerTarget(name, this.o.peerPort) };
  }

  private localSocket(path: string): string {
    const socket = localSocketFor(path);
    if (!socket) throw Object.assign(new Error(`no local backend for ${path}`), { code: grpc.status.UNIMPLEMENTED });
    return socket;
  }

  private local(path: string): LocalChannel {
    let l = this.localByMethod.get(path);
    if (l) return l;
    const socket = this.localSocket(path);
    l = this.locals.get(socket);
    if (!l) this.locals.set(socket, (l = new LocalChannel(socket)));
    this.localByMethod.set(path, l);
    return l;
  }

  /** A client for the target, held until release() (client-pool.ts). */
  private acquire(path: string, t: Target): { client: grpc.Client; release: (code?: number) => void } {
    return this.clients.acquire(t.local ? { local: true, socket: this.localSocket(path) } : { local: false, address: t.address });
  }

  /** Fresh metadata: nothing the client sent is passed on, only the roles apid vouches for. */
  private outgoingMetadata(_t: Target, roles: readonly string[]): grpc.Metadata {
    const md = new grpc.Metadata();
    md.set(ROLES_METADATA, roles.join(','));
    return md;
  }

  private callUnary(path: string, t: Target, roles: readonly string[], req: Buffer, deadline: number): Promise<Buffer> {
    if (t.local) {
      let l: LocalChannel;
      try {
        l = this.local(path);
      } catch (err) {
        return Promise.reject(err);
      }
      // The same metadata as outgoingMetadata: only the roles apid vouches for.
      return l.unary(path, req, { [ROLES_METADATA]: roles.join(',') }, deadline);
    }
    return new Promise((resolve, reject) => {
      let held: ReturnType<ApiProxy['acquire']>;
      try {
        held = this.acquire(path, t);
      } catch (err) {
        return reject(err);
      }
      held.client.makeUnaryRequest(path, raw, raw, req, this.outgoingMetadata(t, roles), { deadline }, (err, res) => {
        held.release(err?.code);
        if (err) reject(err);
        else resolve(res!);
      });
    });
  }

  /** The absolute deadline of a fan-out started now: one per-node deadline, or the caller's if sooner. */
  private fanoutDeadline(callDeadline: grpc.Deadline): number {
    return Math.min(Date.now() + (this.o.fanoutTimeoutMs ?? 30_000), deadlineMs(callDeadline));
  }

  private limiter(): Limiter {
    return new Limiter(this.o.fanoutConcurrency ?? 32);
  }

  private unaryHandler(path: string, shape: ReplyShape): grpc.handleUnaryCall<Buffer, Buffer> {
    return (call, callback) => {
      const a = this.admit(path, call, shape);
      if ('code' in a) return callback({ code: a.code, details: a.details });
      if (a.mode !== 'many') {
        const t = a.targets[0]!;
        this.callUnary(path, t, a.roles, call.request, deadlineMs(call.getDeadline())).then(
          (reply) => {
            let out = reply;
            if (a.mode === 'one' && shape === 'envelope') {
              try {
                out = stampEnvelope(reply, { hostname: t.name });
              } catch (err) {
                return callback({ code: grpc.status.INTERNAL, details: `${t.name}: malformed reply: ${(err as Error).message}` });
              }
            }
            callback(null, out);
          },
          (err) => {
            const e = asUpstreamError(err);
            callback({ code: e.code, details: a.mode === 'one' ? `${t.name}: ${e.details}` : e.details });
          },
        );
        return;
      }
      const deadline = this.fanoutDeadline(call.getDeadline());
      const limit = this.limiter();
      const failed = (t: Target, e: UpstreamError) => {
        this.o.log.warn(`${path} on ${t.name}: ${e.details}`);
        return errorEnvelope({ hostname: t.name, error: e.details, code: e.code });
      };
      Promise.all(
        a.targets.map((t) =>
          limit.run(async () => {
            if (call.cancelled) return Buffer.alloc(0);
            if (Date.now() >= deadline) return failed(t, deadlineError(t));
            try {
              return stampEnvelope(await this.callUnary(path, t, a.roles, call.request, deadline), { hostname: t.name });
            } catch (err) {
              return failed(t, asUpstreamError(err));
            }
          }),
        ),
      ).then((parts) => callback(null, Buffer.concat(parts)));
    };
  }

  private streamHandler(path: string, shape: ReplyShape): grpc.handleServerStreamingCall<Buffer, Buffer> {
    return (call) => {
      const a = this.admit(path, call, shape);
      if ('code' in a) {
        call.emit('error', { code: a.code, details: a.details });
        return;
      }
      const stamp = a.mode !== 'local' && shape === 'stamped';
      const upstreams: grpc.ClientReadableStream<Buffer>[] = [];
      let open = a.targets.length;
      let finished = false;
      const finish = (err?: UpstreamError) => {
        if (finished) return;
        finished = true;
        for (const u of upstreams) u.cancel();
        if (err) call.emit('error', err);
        else call.end();
      };
      call.on('cancelled', () => {
        finished = true;
        for (const u of upstreams) u.cancel();
      });
      // Backpressure: while the caller cannot take more, every upstream waits.
      let paused = false;
      const write = (msg: Buffer) => {
        if (finished || call.write(msg) || paused) return;
        paused = true;
        for (const u of upstreams) u.pause();
        call.once('drain', () => {
          paused = false;
          for (const u of upstreams) u.resume();
        });
      };
      const deadline = a.mode === 'many' ? this.fanoutDeadline(call.getDeadline()) : Infinity;
      const limit = this.limiter();

      const start = async (t: Target) => {
        let done = false; // an upstream ends once: with 'end' or with 'error'
        let held: ReturnType<ApiProxy['acquire']> | undefined;
        const fail = (err: unknown) => {
          if (done) return;
          done = true;
          const e = asUpstreamError(err);
          held?.release(e.code);
          if (e.code === grpc.status.CANCELLED && finished) return;
          if (a.mode === 'many') {
            this.o.log.warn(`${path} on ${t.name}: ${e.details}`);
            if (!finished) call.write(errorMessage({ hostname: t.name, error: e.details, code: e.code }));
            if (--open === 0) finish();
          } else {
            finish({ code: e.code, details: a.mode === 'one' ? `${t.name}: ${e.details}` : e.details });
          }
        };
        try {
          held = this.acquire(path, t);
        } catch (err) {
          return fail(err);
        }
        if (a.mode === 'many') {
          // A slot while connecting, within the fan-out's deadline.
          const release = await limit.acquire();
          try {
            if (finished) return fail({ code: grpc.status.CANCELLED, details: 'cancelled' });
            if (Date.now() >= deadline) return fail(deadlineError(t));
            const ready = await new Promise<Error | undefined>((resolve) => held!.client.waitForReady(deadline, (err) => resolve(err)));
            if (ready) return fail({ code: grpc.status.DEADLINE_EXCEEDED, details: `${t.name}: no connection before the fan-out's deadline (${ready.message})` });
          } finally {
            release();
          }
          if (finished) return fail({ code: grpc.status.CANCELLED, details: 'cancelled' });
        }
        let up: grpc.ClientReadableStream<Buffer>;
        try {
          up = held.client.makeServerStreamRequest(path, raw, raw, call.request, this.outgoingMetadata(t, a.roles), {});
        } catch (err) {
          return fail(err);
        }
        upstreams.push(up);
        if (paused) up.pause();
        up.on('data', (msg: Buffer) => write(stamp ? stampMessage(msg, { hostname: t.name }) : msg));
        up.on('error', fail);
        up.on('end', () => {
          if (done) return;
          done = true;
          held!.release();
          if (--open === 0) finish();
        });
      };
      for (const t of a.targets) void start(t);
    };
  }

  /**
   * A bidirectional stream to one node: client messages are written upstream as they come,
   * pausing the client while the upstream cannot take more (so an upload never piles up in
   * apid beyond a few messages); upstream messages are stamped with the node's metadata when
   * a node was named and the messages have room for it, as for server streams. The client's
   * half-close, cancellation and the upstream's end or error are passed on.
   */
  private bidiHandler(path: string, shape: ReplyShape): grpc.handleBidiStreamingCall<Buffer, Buffer> {
    return (call) => {
      const a = this.admit(path, call, shape, true);
      if ('code' in a) {
        call.emit('error', { code: a.code, details: a.details });
        return;
      }
      const t = a.targets[0]!;
      let held: ReturnType<ApiProxy['acquire']>;
      let up: grpc.ClientDuplexStream<Buffer, Buffer>;
      try {
        held = this.acquire(path, t);
        up = held.client.makeBidiStreamRequest(path, raw, raw, this.outgoingMetadata(t, a.roles), { deadline: call.getDeadline() });
      } catch (err) {
        const e = asUpstreamError(err);
        call.emit('error', { code: e.code, details: a.mode === 'one' ? `${t.name}: ${e.details}` : e.details });
        return;
      }
      let finished = false;
      const stop = (code?: number) => {
        if (finished) return;
        finished = true;
        held.release(code);
        call.off('data', fromClient);
        up.off('data', fromUpstream);
      };

      // client → upstream
      const fromClient = (msg: Buffer) => {
        if (up.write(msg)) return;
        call.pause();
        up.once('drain', () => call.resume());
      };
      call.on('data', fromClient);
      // A client's cancel also ends the readable side (the RST ends the HTTP/2 request body)
      // shortly before 'cancelled'. Half-closing upstream a turn later catches most cancels
      // first; when it does not, the upstream sees its requests end, then the cancel (machined
      // also checks an upload against its announced size).
      call.on('end', () => {
        setImmediate(() => {
          if (!finished && !call.cancelled) up.end();
        });
      });
      call.on('cancelled', () => {
        stop();
        up.cancel();
      });

      // upstream → client
      const stamp = a.mode !== 'local' && shape === 'stamped';
      const fromUpstream = (msg: Buffer) => {
        if (call.write(stamp ? stampMessage(msg, { hostname: t.name }) : msg)) return;
        up.pause();
        call.once('drain', () => up.resume());
      };
      up.on('data', fromUpstream);
      up.on('error', (err) => {
        if (finished) return;
        const e = asUpstreamError(err);
        stop(e.code);
        call.emit('error', { code: e.code, details: a.mode === 'one' ? `${t.name}: ${e.details}` : e.details });
      });
      up.on('end', () => {
        if (finished) return;
        stop();
        call.end();
      });
    };
  }
}
