// apid's proxy: every routable RPC is served with raw bytes in and out (apid never needs to
// decode a request or a reply), authorized against the RBAC table, then routed to this node's
// daemon over its unix socket, to one other node's apid, or to many nodes at once with each
// reply stamped with its node's metadata so one failing node never hides the others.
import * as grpc from '@grpc/grpc-js';
import { serviceDefinition } from '../contract/protos.ts';
import type { Logger } from '../lib/log.ts';
import { ENVELOPE_SERVICES, LOCAL_BACKENDS, localSocketFor, serviceOf } from './backends.ts';
import { ROLES_METADATA, authorize, callerRoles, type AuthError } from './authz.ts';
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
  authenticate?: (call: SurfaceCall) => string[] | AuthError;
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
  }

  /** Service definitions with raw (Buffer) serializers and their proxy handlers. */
  services(): Array<{ definition: grpc.ServiceDefinition; implementation: grpc.UntypedServiceImplementation }> {
    return Object.keys(LOCAL_BACKENDS).map((name) => {
      const typed = serviceDefinition(name);
      const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
      const implementation: grpc.UntypedServiceImplementation = {};
      for (const [method, def] of Object.entries(typed)) {
        if (def.requestStream) continue; // no client-streaming RPCs are routed
        definition[method] = { ...def, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw };
        implementation[method] = def.responseStream ? this.streamHandler(def.path) : this.unaryHandler(def.path);
      }
      return { definition, implementation };
    });
  }

  private authenticate(call: SurfaceCall): string[] | AuthError {
    if (this.o.authenticate) return this.o.authenticate(call);
    return callerRoles(call.getAuthContext()?.sslPeerCertificate, call.metadata);
  }

  /** Checks the caller and resolves the route; returns an error to send instead. */
  private admit(path: string, call: SurfaceCall): { roles: string[]; targets: Target[]; mode: 'local' | 'one' | 'many' } | AuthError {
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
    if (!Array.isArray(roles)) return roles;
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

  private client(path: string, t: Target): grpc.Client {
    if (t.local) {
      const socket = localSocketFor(path);
      if (!socket) throw Object.assign(new Error(`no local backend for ${path}`), { code: grpc.status.UNIMPLEMENTED });
      const key = `unix:${socket}`;
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
  private outgoingMetadata(_t: Target, roles: string[]): grpc.Metadata {
    const md = new grpc.Metadata();
    md.set(ROLES_METADATA, roles.join(','));
    return md;
  }

  private callUnary(path: string, t: Target, roles: string[], req: Buffer, deadline: grpc.Deadline): Promise<Buffer> {
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
}
