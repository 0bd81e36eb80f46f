// apid's proxy: every routable RPC is served with raw bytes in and out (apid never needs to
// decode a request or a reply), authorized against the RBAC table, then routed to this node's
// daemon over its unix socket, to one other node's apid, or to many nodes at once with each
// reply stamped with its node's metadata so one failing node never hides the others.
// Bidirectional streams (UpgradeStream: an upload one way, progress the other) go to exactly
// one node and are piped both ways with backpressure; client-streaming-only RPCs (none yet)
// are not routed. Unary calls to this node's daemons, the common case, go through
// src/apid/local.ts (plain HTTP/2 on the unix socket), everything else through grpc-js
// clients; the caller's roles are read once per TLS connection (ConnectionRoles).
import * as grpc from '@grpc/grpc-js';
import { serviceDefinition } from '../contract/protos.ts';
import type { Logger } from '../lib/log.ts';
import { ENVELOPE_SERVICES, LOCAL_BACKENDS, localSocketFor, serviceOf } from './backends.ts';
import { ConnectionRoles, ROLES_METADATA, authorize, type AuthError } from './authz.ts';
import { LocalChannel } from './local.ts';
import { MAINTENANCE_ROLE, maintenanceAuthorize } from './maintenance.ts';
import { RouteError, routeOf, splitHostPort, type SelfIdentity } from './router.ts';
import { errorEnvelope, errorMessage, stampEnvelope, stampMessage } from './wire.ts';

const raw = (b: Buffer) => b;

/** What apid reads from any incoming call: its metadata and TLS peer. */
export type SurfaceCall = Pick<grpc.ServerUnaryCall<unknown, unknown>, 'metadata' | 'getAuthContext' | 'getPeer'>;

export interface ProxyOptions {
  self: SelfIdentity;
  /** apid port on other nodes when a target names no port. */
  peerPort: number;
  /** TLS credentials towards other nodes' apid (apid's own client certificate). */
  peerCredentials: () => grpc.ChannelCredentials | undefined;
  log: Logger;
  /** Per-node deadline for unary calls fanned out to several nodes. */
  fanoutTimeoutMs?: number;
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

export class ApiProxy {
  private readonly clients = new Map<string, grpc.Client>();
  /** Unary calls to this node's daemons: one channel per socket (src/apid/local.ts), found by method. */
  private readonly locals = new Map<string, LocalChannel>();
  private readonly localByMethod = new Map<string, LocalChannel>();
  private readonly connectionRoles = new ConnectionRoles();
  private credsGeneration = 0;

  constructor(private readonly o: ProxyOptions) {}

  /** Peer certificates changed: drop the clients so the next calls use the new ones. */
  resetPeers(): void {
    this.credsGeneration++;
    for (const [key, c] of this.clients) {
      if (!key.startsWith('unix:')) {
        c.close();
        this.clients.delete(key);
      }
    }
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
    for (const l of this.locals.values()) l.close();
    this.locals.clear();
    this.localByMethod.clear();
  }

  /** Service definitions with raw (Buffer) serializers and their proxy handlers. */
  services(): Array<{ definition: grpc.ServiceDefinition; implementation: grpc.UntypedServiceImplementation }> {
    return Object.keys(LOCAL_BACKENDS).map((name) => {
      const typed = serviceDefinition(name);
      const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
      const implementation: grpc.UntypedServiceImplementation = {};
      for (const [method, def] of Object.entries(typed)) {
        if (def.requestStream && !def.responseStream) continue; // client-streaming-only RPCs are not routed
        definition[method] = { ...def, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw };
        implementation[method] = def.requestStream
          ? this.bidiHandler(def.path)
          : def.responseStream
            ? this.streamHandler(def.path)
            : this.unaryHandler(def.path);
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
   * `node`, naming several is refused.
   */
  private admit(path: string, call: SurfaceCall, single = false): { roles: readonly string[]; targets: Target[]; mode: 'local' | 'one' | 'many' } | AuthError {
    if (this.o.maintenance?.()) {
      const refused = maintenanceAuthorize(path);
      if (refused) return refused;
      const route = routeOf(call.metadata);
      if (route.kind === 'many' || (route.kind === 'one' && !this.o.self.isSelf(route.target))) {
        return { code: grpc.status.FAILED_PRECONDITION, details: 'in maintenance mode a node answers only for itself' };
      }
      return { roles: [MAINTENANCE_ROLE], mode: 'local', targets: [this.target('', true)] };
    }
    const roles = this.authenticate(call);
    if ('code' in roles) return roles;
    const denied = authorize(path, roles);
    if (denied) return denied;
    let route;
    try {
      route = routeOf(call.metadata);
    } catch (err) {
      if (err instanceof RouteError) return { code: grpc.status.INVALID_ARGUMENT, details: err.message };
      throw err;
    }
    if (route.kind === 'local') return { roles, mode: 'local', targets: [this.target('', true)] };
    if (route.kind === 'one') return { roles, mode: 'one', targets: [this.target(route.target)] };
    if (single) {
      if (route.targets.length === 1) return { roles, mode: 'one', targets: [this.target(route.targets[0]!)] };
      return {
        code: grpc.status.INVALID_ARGUMENT,
        details: `${path} streams to one node at a time, but "nodes" names ${route.targets.length} (${route.targets.join(', ')}): target one node with "node"`,
      };
    }
    if (!ENVELOPE_SERVICES.has(serviceOf(path))) {
      return { code: grpc.status.INVALID_ARGUMENT, details: `${path} answers for one node at a time: use "node", not "nodes"` };
    }
    return { roles, mode: 'many', targets: route.targets.map((t) => this.target(t)) };
  }

  private target(name: string, forceLocal = false): Target {
    if (forceLocal || this.o.self.isSelf(name)) return { name, local: true, address: '' };
    const { host, port } = splitHostPort(name);
    const h = host.includes(':') ? `[${host}]` : host;
    return { name, local: false, address: `${h}:${port ?? this.o.peerPort}` };
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

  private client(path: string, t: Target): grpc.Client {
    if (t.local) {
      const key = `unix:${this.localSocket(path)}`;
      let c = this.clients.get(key);
      if (!c) this.clients.set(key, (c = new grpc.Client(key, grpc.credentials.createInsecure())));
      return c;
    }
    const creds = this.o.peerCredentials();
    if (!creds) throw Object.assign(new Error('this node has no certificate to reach other nodes yet'), { code: grpc.status.UNAVAILABLE });
    const key = `${t.address}#${this.credsGeneration}`;
    let c = this.clients.get(key);
    if (!c) this.clients.set(key, (c = new grpc.Client(t.address, creds)));
    return c;
  }

  /** Fresh metadata: nothing the client sent is passed on, only the roles apid vouches for. */
  private outgoingMetadata(_t: Target, roles: readonly string[]): grpc.Metadata {
    const md = new grpc.Metadata();
    md.set(ROLES_METADATA, roles.join(','));
    return md;
  }

  private callUnary(path: string, t: Target, roles: readonly string[], req: Buffer, deadline: grpc.Deadline): Promise<Buffer> {
    if (t.local) {
      let l: LocalChannel;
      try {
        l = this.local(path);
      } catch (err) {
        return Promise.reject(err);
      }
      // The same metadata as outgoingMetadata: only the roles apid vouches for.
      return l.unary(path, req, { [ROLES_METADATA]: roles.join(',') }, deadline instanceof Date ? deadline.getTime() : Number(deadline));
    }
    return new Promise((resolve, reject) => {
      let c: grpc.Client;
      try {
        c = this.client(path, t);
      } catch (err) {
        return reject(err);
      }
      c.makeUnaryRequest(path, raw, raw, req, this.outgoingMetadata(t, roles), { deadline }, (err, res) => (err ? reject(err) : resolve(res!)));
    });
  }

  private unaryHandler(path: string): grpc.handleUnaryCall<Buffer, Buffer> {
    const envelope = ENVELOPE_SERVICES.has(serviceOf(path));
    return (call, callback) => {
      const a = this.admit(path, call);
      if ('code' in a) return callback({ code: a.code, details: a.details });
      const deadline = call.getDeadline();
      if (a.mode !== 'many') {
        const t = a.targets[0]!;
        this.callUnary(path, t, a.roles, call.request, deadline).then(
          (reply) => callback(null, a.mode === 'one' && envelope ? stampEnvelope(reply, { hostname: t.name }) : reply),
          (err) => {
            const e = asUpstreamError(err);
            callback({ code: e.code, details: a.mode === 'one' ? `${t.name}: ${e.details}` : e.details });
          },
        );
        return;
      }
      const perNode = Date.now() + (this.o.fanoutTimeoutMs ?? 30_000);
      const callDeadline = deadline instanceof Date ? deadline.getTime() : Number(deadline);
      const nodeDeadline = Math.min(perNode, Number.isFinite(callDeadline) ? callDeadline : Infinity);
      Promise.all(
        a.targets.map((t) =>
          this.callUnary(path, t, a.roles, call.request, nodeDeadline).then(
            (reply) => stampEnvelope(reply, { hostname: t.name }),
            (err) => {
              const e = asUpstreamError(err);
              this.o.log.warn(`${path} on ${t.name}: ${e.details}`);
              return errorEnvelope({ hostname: t.name, error: e.details, code: e.code });
            },
          ),
        ),
      ).then((parts) => callback(null, Buffer.concat(parts)));
    };
  }

  private streamHandler(path: string): grpc.handleServerStreamingCall<Buffer, Buffer> {
    return (call) => {
      const a = this.admit(path, call);
      if ('code' in a) {
        call.emit('error', { code: a.code, details: a.details });
        return;
      }
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
      for (const t of a.targets) {
        const stamp = a.mode !== 'local';
        let done = false; // an upstream ends once: with 'end' or with 'error'
        const fail = (err: unknown) => {
          if (done) return;
          done = true;
          const e = asUpstreamError(err);
          if (e.code === grpc.status.CANCELLED && finished) return;
          if (a.mode === 'many') {
            call.write(errorMessage({ hostname: t.name, error: e.details, code: e.code }));
            if (--open === 0) finish();
          } else {
            finish({ code: e.code, details: a.mode === 'one' ? `${t.name}: ${e.details}` : e.details });
          }
        };
        let up: grpc.ClientReadableStream<Buffer>;
        try {
          up = this.client(path, t).makeServerStreamRequest(path, raw, raw, call.request, this.outgoingMetadata(t, a.roles), {});
        } catch (err) {
          fail(err);
          continue;
        }
        upstreams.push(up);
        up.on('data', (msg: Buffer) => {
          if (!finished) call.write(stamp ? stampMessage(msg, { hostname: t.name }) : msg);
        });
        up.on('error', fail);
        up.on('end', () => {
          if (done) return;
          done = true;
          if (--open === 0) finish();
        });
      }
    };
  }

  /**
   * A bidirectional stream to one node: client messages are written upstream as they come,
   * pausing the client while the upstream cannot take more (so an upload never piles up in
   * apid beyond a few messages); upstream messages are stamped with the node's metadata when
   * a node was named, as for server streams. The client's half-close, cancellation and the
   * upstream's end or error are passed on.
   */
  private bidiHandler(path: string): grpc.handleBidiStreamingCall<Buffer, Buffer> {
    return (call) => {
      const a = this.admit(path, call, true);
      if ('code' in a) {
        call.emit('error', { code: a.code, details: a.details });
        return;
      }
      const t = a.targets[0]!;
      let up: grpc.ClientDuplexStream<Buffer, Buffer>;
      try {
        up = this.client(path, t).makeBidiStreamRequest(path, raw, raw, this.outgoingMetadata(t, a.roles), { deadline: call.getDeadline() });
      } catch (err) {
        const e = asUpstreamError(err);
        call.emit('error', { code: e.code, details: a.mode === 'one' ? `${t.name}: ${e.details}` : e.details });
        return;
      }
      let finished = false;
      const stop = () => {
        if (finished) return;
        finished = true;
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
      const stamp = a.mode !== 'local';
      const fromUpstream = (msg: Buffer) => {
        if (call.write(stamp ? stampMessage(msg, { hostname: t.name }) : msg)) return;
        up.pause();
        call.once('drain', () => up.resume());
      };
      up.on('data', fromUpstream);
      up.on('error', (err) => {
        if (finished) return;
        stop();
        const e = asUpstreamError(err);
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
