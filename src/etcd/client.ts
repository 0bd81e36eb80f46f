// A small client of etcd's v3 gRPC API (protos/etcd), over mutual TLS with certificates from the
// etcd CA: what machined needs to join, manage and observe the etcd it supervises, and to keep
// the cluster registry (members) in it. Several endpoints are one cluster: a call goes to the
// endpoint that last answered and fails over to the next when one is unavailable. Member ids are
// uint64 and travel as decimal strings.
//
// No npm package is used: the maintained one (etcd3) brings its own proto loading and a
// dependency tree; Bronze already compiles protos at build time and has grpc-js.
import * as grpc from '@grpc/grpc-js';
import { serviceClient } from '../contract/protos.ts';
import { PeerCredentials } from '../lib/peer-credentials.ts';

export interface EtcdTls {
  /** PEM: the etcd CA, and a certificate (clientAuth) and key it issued. */
  ca: string;
  cert: string;
  key: string;
}

export interface EtcdMember {
  /** Decimal uint64. */
  id: string;
  /** Empty until the member has started. */
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

export interface EtcdStatus {
  memberId: string;
  version: string;
  dbSize: number;
  dbSizeInUse: number;
  leader: string;
  raftIndex: string;
  raftTerm: string;
  raftAppliedIndex: string;
  errors: string[];
  isLearner: boolean;
  storageVersion: string;
}

export interface EtcdAlarm {
  memberId: string;
  alarm: 'NONE' | 'NOSPACE' | 'CORRUPT';
}

export interface KeyValue {
  key: string;
  value: Buffer;
  modRevision: string;
  lease: string;
}

/** An etcd error, with the gRPC status and etcd's own message ("etcdserver: ..."). */
export class EtcdError extends Error {
  constructor(
    readonly code: grpc.status,
    readonly details: string,
    readonly endpoint: string,
  ) {
    super(`etcd at ${endpoint}: ${details}`);
    this.name = 'EtcdError';
  }
}

type Unary = (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: any) => void) => grpc.ClientUnaryCall;

/** The end of the range of every key that starts with `prefix` (etcd's prefix convention). */
export function prefixEnd(prefix: string): Buffer {
  const b = Buffer.from(prefix);
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i]! < 0xff) {
      const end = Buffer.from(b.subarray(0, i + 1));
      end[i]!++;
      return end;
    }
  }
  return Buffer.from([0]);
}

function member(m: any): EtcdMember {
  return { id: String(m.ID ?? '0'), name: m.name ?? '', peerURLs: m.peerURLs ?? [], clientURLs: m.clientURLs ?? [], isLearner: Boolean(m.isLearner) };
}

/** Whether an error means "try another endpoint" rather than "etcd said no". */
function unreachable(err: grpc.ServiceError): boolean {
  return err.code === grpc.status.UNAVAILABLE || err.code === grpc.status.DEADLINE_EXCEEDED;
}

export interface EtcdClientOptions {
  /** Per call, ms; default 10 s. */
  timeoutMs?: number;
}

export class EtcdClient {
  readonly endpoints: string[];
  private readonly creds: grpc.ChannelCredentials;
  private readonly clients = new Map<string, Map<string, grpc.Client>>();
  private current = 0;
  private readonly timeoutMs: number;

  /** `endpoints`: host:port (or https:// URLs, as etcd advertises them). */
  constructor(endpoints: string[], tls: EtcdTls, opts: EtcdClientOptions = {}) {
    if (endpoints.length === 0) throw new Error('etcd client: no endpoints');
    this.endpoints = [...new Set(endpoints.map((e) => e.replace(/^https?:\/\//, '').replace(/\/$/, '')))];
    // Not createSsl(): it would send an address as the TLS server name (Node's DEP0123 warning).
    this.creds = new PeerCredentials(Buffer.from(tls.ca), Buffer.from(tls.key), Buffer.from(tls.cert));
    this.timeoutMs = opts.timeoutMs ?? 10_000;
  }

  private client(service: string, endpoint: string): grpc.Client {
    let byService = this.clients.get(endpoint);
    if (!byService) this.clients.set(endpoint, (byService = new Map()));
    let c = byService.get(service);
    if (!c) {
      const Ctor = serviceClient(`etcdserverpb.${service}`);
      // etcd's certificates name addresses: the endpoint's host is checked against them.
      c = new Ctor(endpoint, this.creds, { 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
      byService.set(service, c);
    }
    return c;
  }

  /** One unary call on one endpoint. */
  callAt<T = any>(endpoint: string, service: string, method: string, req: object, timeoutMs = this.timeoutMs): Promise<T> {
    const c = this.client(service, endpoint) as unknown as Record<string, Unary>;
    return new Promise((resolve, reject) => {
      c[method]!.call(c, req, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => {
        if (err) reject(new EtcdError(err.code, err.details || err.message, endpoint));
        else resolve(res as T);
      });
    });
  }

  /** A unary call on the cluster: the last good endpoint first, then the others. */
  async call<T = any>(service: string, method: string, req: object, timeoutMs = this.timeoutMs): Promise<T> {
    let last: EtcdError | undefined;
    for (let i = 0; i < this.endpoints.length; i++) {
      const at = (this.current + i) % this.endpoints.length;
      try {
        const res = await this.callAt<T>(this.endpoints[at]!, service, method, req, timeoutMs);
        this.current = at;
        return res;
      } catch (err) {
        if (!(err instanceof EtcdError) || !unreachable({ code: err.code } as grpc.ServiceError)) throw err;
        last = err;
      }
    }
    throw last!;
  }

  async memberList(): Promise<EtcdMember[]> {
    const res = await this.call('Cluster', 'MemberList', {});
    return (res.members ?? []).map(member);
  }

  async memberAdd(peerURLs: string[], isLearner: boolean): Promise<{ added: EtcdMember; members: EtcdMember[] }> {
    const res = await this.call('Cluster', 'MemberAdd', { peerURLs, isLearner });
    return { added: member(res.member), members: (res.members ?? []).map(member) };
  }

  async memberRemove(id: string): Promise<void> {
    await this.call('Cluster', 'MemberRemove', { ID: id });
  }

  async memberPromote(id: string): Promise<void> {
    await this.call('Cluster', 'MemberPromote', { ID: id });
  }

  /** The status of the member at `endpoint` (default: whichever answers). */
  async status(endpoint?: string, timeoutMs?: number): Promise<EtcdStatus> {
    const res = endpoint ? await this.callAt(endpoint, 'Maintenance', 'Status', {}, timeoutMs) : await this.call('Maintenance', 'Status', {}, timeoutMs);
    return {
      memberId: String(res.header?.member_id ?? '0'),
      version: res.version ?? '',
      dbSize: Number(res.dbSize ?? 0),
      dbSizeInUse: Number(res.dbSizeInUse ?? 0),
      leader: String(res.leader ?? '0'),
      raftIndex: String(res.raftIndex ?? '0'),
      raftTerm: String(res.raftTerm ?? '0'),
      raftAppliedIndex: String(res.raftAppliedIndex ?? '0'),
      errors: res.errors ?? [],
      isLearner: Boolean(res.isLearner),
      storageVersion: res.storageVersion ?? '',
    };
  }

  async alarms(endpoint?: string): Promise<EtcdAlarm[]> {
    const req = { action: 'GET', memberID: 0, alarm: 'NONE' };
    const res = endpoint ? await this.callAt(endpoint, 'Maintenance', 'Alarm', req) : await this.call('Maintenance', 'Alarm', req);
    return (res.alarms ?? []).map((a: any) => ({ memberId: String(a.memberID ?? '0'), alarm: a.alarm ?? 'NONE' }));
  }

  /** Deactivates each alarm of `memberId` (its own member, as Talos does); returns them. */
  async disarm(memberId: string, endpoint?: string): Promise<EtcdAlarm[]> {
    const mine = (await this.alarms(endpoint)).filter((a) => a.memberId === memberId);
    for (const a of mine) {
      const req = { action: 'DEACTIVATE', memberID: a.memberId, alarm: a.alarm };
      if (endpoint) await this.callAt(endpoint, 'Maintenance', 'Alarm', req);
      else await this.call('Maintenance', 'Alarm', req);
    }
    return mine;
  }

  async defragment(endpoint: string): Promise<void> {
    await this.callAt(endpoint, 'Maintenance', 'Defragment', {}, 5 * 60_000);
  }

  /** Asks `endpoint` (the leader) to hand leadership to `targetId`. */
  async moveLeader(endpoint: string, targetId: string): Promise<void> {
    await this.callAt(endpoint, 'Maintenance', 'MoveLeader', { targetID: targetId });
  }

  /** The backend database of the member at `endpoint`, as etcd streams it (with its hash at the end). */
  snapshot(endpoint: string): AsyncIterable<Buffer> {
    const c = this.client('Maintenance', endpoint) as unknown as { Snapshot(req: object, md: grpc.Metadata): grpc.ClientReadableStream<any> };
    const stream = c.Snapshot({}, new grpc.Metadata());
    return (async function* () {
      try {
        for await (const msg of stream) if (msg.blob?.length) yield Buffer.from(msg.blob);
      } catch (err) {
        const e = err as grpc.ServiceError;
        throw new EtcdError(e.code ?? grpc.status.UNKNOWN, e.details || e.message, endpoint);
      }
    })();
  }

  async get(prefix: string): Promise<KeyValue[]> {
    const res = await this.call('KV', 'Range', { key: Buffer.from(prefix), range_end: prefixEnd(prefix) });
    return (res.kvs ?? []).map((kv: any) => ({ key: Buffer.from(kv.key).toString(), value: Buffer.from(kv.value ?? []), modRevision: String(kv.mod_revision ?? '0'), lease: String(kv.lease ?? '0') }));
  }

  async put(key: string, value: string | Buffer, lease = '0'): Promise<void> {
    await this.call('KV', 'Put', { key: Buffer.from(key), value: Buffer.from(value), lease });
  }

  async delete(key: string): Promise<void> {
    await this.call('KV', 'DeleteRange', { key: Buffer.from(key) });
  }

  /** A lease of `ttlSeconds`; its id. */
  async leaseGrant(ttlSeconds: number): Promise<string> {
    const res = await this.call('Lease', 'LeaseGrant', { TTL: ttlSeconds, ID: 0 });
    if (res.error) throw new Error(`etcd lease: ${res.error}`);
    return String(res.ID);
  }

  /** Renews a lease once; false when it no longer exists (expired or revoked). */
  async leaseKeepAlive(id: string): Promise<boolean> {
    const endpoint = this.endpoints[this.current]!;
    const c = this.client('Lease', endpoint) as unknown as { LeaseKeepAlive(md: grpc.Metadata, opts: grpc.CallOptions): grpc.ClientDuplexStream<object, any> };
    const stream = c.LeaseKeepAlive(new grpc.Metadata(), { deadline: Date.now() + this.timeoutMs });
    return new Promise((resolve, reject) => {
      stream.once('data', (res: any) => {
        stream.cancel();
        resolve(Number(res.TTL ?? 0) > 0);
      });
      stream.once('error', (err: grpc.ServiceError) => {
        if (err.code !== grpc.status.CANCELLED) reject(new EtcdError(err.code, err.details || err.message, endpoint));
      });
      stream.write({ ID: id });
    });
  }

  close(): void {
    for (const byService of this.clients.values()) for (const c of byService.values()) c.close();
    this.clients.clear();
  }
}
