// The cluster registry: every node publishes who it is (hostname, addresses, machine type, OS)
// and sees every other node as a Member resource (Members.cluster.talos.dev).
//
// The registry lives in etcd, each record on a lease, so that a node that goes away drops out by
// itself. Control planes write their own record, /bronze/members/<node id>, with their own etcd
// credentials, and read the others straight from etcd. Workers run no etcd: they say Hello to
// trustd on a control plane (the control-plane endpoint, :50001, with the join token, presenting
// the API certificate trustd issued them), which relays it to its node's machined; machined
// writes /bronze/workers/<id> (the id derived by trustd from the worker's certificate), within
// the limits of src/contract/registry-limits.ts, and answers with every member, without node
// ids. A relayed Hello can never write a control plane's record (another prefix), and a control
// plane's record wins a hostname both claim. Both kinds of node refresh every `intervalMs`.
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../../lib/log.ts';
import type { State } from '../../state/state.ts';
import { StatePublisher } from '../../daemon/publisher.ts';
import { serviceClient } from '../../contract/protos.ts';
import { CLUSTER_NAMESPACE, MACHINE_TYPES, MEMBER_TYPE, type MemberSpec } from '../../contract/resources/member.ts';
import { netIP } from '../../contract/resources/net.ts';
import { bytesToIp } from '../../lib/ip.ts';
import type { EtcdClient } from '../../etcd/client.ts';
import { PeerCredentials } from '../../lib/peer-credentials.ts';
import { prefixEnd } from '../../etcd/client.ts';
import { RateLimiter } from '../../lib/rate-limit.ts';
import { REGISTRY_LIMITS, RegistryRefusal, WORKER_ID_PATTERN, workerRecord, workerTtlSeconds, type WorkerRecord } from '../../contract/registry-limits.ts';

/** Control planes' records, written with their own etcd credentials. */
export const REGISTRY_PREFIX = '/bronze/members/';
/** Workers' records, written by machined for trustd's relayed Hello (never under REGISTRY_PREFIX). */
export const WORKER_PREFIX = '/bronze/workers/';

/** How a MemberSpec travels in Hello (Talos's message, talos.resource.definitions.cluster.MemberSpec); `withId` false: no node_id (replies to workers). */
export function memberToWire(m: MemberSpec, withId = true): object {
  return {
    ...(withId ? { node_id: m.nodeId } : {}),
    addresses: m.addresses.map((a) => netIP(a)),
    hostname: m.hostname,
    machine_type: MACHINE_TYPES[m.machineType] ?? 0,
    operating_system: m.operatingSystem,
  };
}

const TYPE_NAMES: Record<string, string> = { TYPE_UNKNOWN: 'unknown', TYPE_INIT: 'init', TYPE_CONTROL_PLANE: 'controlplane', TYPE_WORKER: 'worker' };

export function memberFromWire(w: any): MemberSpec {
  const type = typeof w.machine_type === 'string' ? (TYPE_NAMES[w.machine_type] ?? 'unknown') : (Object.entries(MACHINE_TYPES).find(([, n]) => n === w.machine_type)?.[0] ?? 'unknown');
  return {
    nodeId: String(w.node_id ?? ''),
    addresses: (w.addresses ?? []).map((a: { ip: Uint8Array }) => bytesToIp(Buffer.from(a.ip))),
    hostname: String(w.hostname ?? ''),
    machineType: type,
    operatingSystem: String(w.operating_system ?? ''),
  };
}

function validMember(m: MemberSpec): string | undefined {
  if (!m.nodeId || !/^[A-Za-z0-9._-]{1,128}$/.test(m.nodeId)) return 'node_id must be 1-128 letters, digits, ".", "_" or "-"';
  if (!m.hostname || m.hostname.length > 253) return 'hostname is required';
  if (m.addresses.some((a) => net.isIP(a) === 0)) return 'addresses must be IP addresses';
  return undefined;
}

export interface RegistryOptions {
  log: Logger;
  state: State;
  /** This node's record; undefined until it has a configuration. */
  self: () => MemberSpec | undefined;
  /** A client of the cluster's etcd when this node is a member whose etcd runs; else undefined. */
  etcd: () => Promise<EtcdClient | undefined>;
  /** Workers: say Hello to trustd (host of the control-plane endpoint), presenting the API certificate trustd issued (PEM). */
  worker?: () => WorkerEndpoint | undefined;
  /** Default 10 s; records live three times as long. */
  intervalMs?: number;
}

export interface WorkerEndpoint {
  host: string;
  port: number;
  token: string;
  /** The OS CA (PEM), to verify trustd. */
  ca: string;
  /** The node's API certificate and key (PEM), trustd's proof of who is calling. */
  cert: string;
  key: string;
}

/** A new worker record refused because the registry holds the most it may. */
export class RegistryFullError extends Error {
  override name = 'RegistryFullError';
}

export class ClusterRegistry {
  private timer: NodeJS.Timeout | undefined;
  private readonly publisher: StatePublisher;
  private running = false;
  private stopped = false;

  constructor(private readonly o: RegistryOptions) {
    this.publisher = new StatePublisher(o.state, 'machined');
  }

  private get interval(): number {
    return this.o.intervalMs ?? 10_000;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Refresh now (e.g. after the configuration or etcd changed). */
  poke(): void {
    if (!this.stopped) this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const members = await this.refresh();
      if (members) await this.publish(members);
    } catch (err) {
      this.o.log.warn(`cluster registry: ${(err as Error).message}`);
    } finally {
      this.running = false;
      if (!this.stopped) this.schedule(this.interval);
    }
  }

  /** The members, after writing this node's record; undefined when there is no way to the registry yet. */
  private async refresh(): Promise<MemberSpec[] | undefined> {
    const self = this.o.self();
    if (!self) return undefined;
    const client = await this.o.etcd();
    if (client) return this.viaEtcd(client, self, this.interval * 3);
    const w = this.o.worker?.();
    if (w) return this.viaTrustd(w, self);
    return [self];
  }

  /** Writes `member` (leased for ttlMs) and reads every record: the registry's one operation. */
  async hello(client: EtcdClient, member: MemberSpec, ttlMs: number): Promise<MemberSpec[]> {
    const bad = validMember(member);
    if (bad) throw new Error(`invalid member: ${bad}`);
    const lease = await client.leaseGrant(Math.max(5, Math.round(ttlMs / 1000)));
    await client.put(REGISTRY_PREFIX + member.nodeId, JSON.stringify(member), lease);
    return this.list(client);
  }

  /** Every member: the control planes' records, then the workers' (each checked again, a worker). */
  async list(client: EtcdClient): Promise<MemberSpec[]> {
    const out: MemberSpec[] = [];
    for (const kv of await client.get(REGISTRY_PREFIX)) {
      try {
        out.push(JSON.parse(kv.value.toString('utf8')) as MemberSpec);
      } catch {
        // a record that is not ours: skip it
      }
    }
    for (const kv of await client.get(WORKER_PREFIX)) {
      try {
        const id = kv.key.slice(WORKER_PREFIX.length);
        out.push(workerRecord(JSON.parse(kv.value.toString('utf8')), id));
      } catch {
        // not a record machined wrote: skip it
      }
    }
    return out;
  }

  #workerQueue: Promise<unknown> = Promise.resolve();

  /**
   * Writes a worker's record (already checked: workerRecord) leased for ttlSeconds, unless it
   * is a new id and the registry holds `maxWorkers` worker records already (RegistryFullError,
   * nothing written). One at a time in this process, so that the count holds.
   */
  helloWorker(client: EtcdClient, record: WorkerRecord, ttlSeconds: number, maxWorkers: number = REGISTRY_LIMITS.maxWorkers): Promise<void> {
    const run = async () => {
      const key = WORKER_PREFIX + record.nodeId;
      const prev = (await client.call('KV', 'Range', { key: Buffer.from(key), keys_only: true })).kvs?.[0] as { lease?: string | number } | undefined;
      if (!prev) {
        const n = Number((await client.call('KV', 'Range', { key: Buffer.from(WORKER_PREFIX), range_end: prefixEnd(WORKER_PREFIX), count_only: true })).count ?? 0);
        if (n >= maxWorkers) throw new RegistryFullError(`the registry holds ${n} worker records, its limit; ${record.nodeId} is not added (it is added when another worker's record expires)`);
      }
      const lease = await client.leaseGrant(ttlSeconds);
      await client.put(key, JSON.stringify(record), lease);
      // One lease per record: the one before holds nothing now.
      const old = String(prev?.lease ?? '0');
      if (old !== '0' && old !== lease) await client.call('Lease', 'LeaseRevoke', { ID: old }).catch(() => undefined);
    };
    const p = this.#workerQueue.then(run, run);
    this.#workerQueue = p.catch(() => undefined);
    return p;
  }

  private async viaEtcd(client: EtcdClient, self: MemberSpec, ttlMs: number): Promise<MemberSpec[]> {
    try {
      // A fresh lease each time (the one before expires by itself): simple, and a node that
      // stops refreshing drops out within ttlMs.
      return await this.hello(client, self, ttlMs);
    } finally {
      client.close();
    }
  }

  private async viaTrustd(w: WorkerEndpoint, self: MemberSpec): Promise<MemberSpec[]> {
    const target = `${net.isIPv6(w.host) ? `[${w.host}]` : w.host}:${w.port}`;
    const Registry = serviceClient('bronze.cluster.Registry');
    // The API certificate trustd issued this node is its identity towards trustd: the record's id is derived from it.
    const client = new Registry(target, new PeerCredentials(Buffer.from(w.ca), Buffer.from(w.key), Buffer.from(w.cert))) as unknown as grpc.Client & {
      Hello(req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: { members?: unknown[] }) => void): void;
    };
    const md = new grpc.Metadata();
    md.set('token', w.token);
    try {
      return await new Promise((resolve, reject) =>
        client.Hello(
          {
            // No node_id (trustd derives it), a worker, within the limits trustd enforces.
            member: memberToWire({ ...self, machineType: 'worker', addresses: self.addresses.slice(0, REGISTRY_LIMITS.maxAddresses) }, false),
            ttl_seconds: Math.min(REGISTRY_LIMITS.maxTtlSeconds, Math.round((this.interval * 3) / 1000)),
          },
          md,
          { deadline: Date.now() + 10_000 },
          (err, res) => {
            if (err) return reject(new Error(`trustd at ${target}: ${err.details || err.message}`));
            // The reply names no node ids; this node's own entry is its own record.
            const members = (res?.members ?? []).map(memberFromWire);
            resolve(members.map((m) => (m.machineType === 'worker' && m.hostname === self.hostname ? self : m)));
          },
        ),
      );
    } finally {
      client.close();
    }
  }

  /**
   * Makes the Member resources exactly `members` (by hostname, as Talos names them). A control
   * plane's record wins a hostname a worker's also claims; between two workers, the first.
   */
  async publish(members: MemberSpec[]): Promise<void> {
    const byId = new Map<string, MemberSpec>();
    for (const m of members) {
      if (!m.hostname) continue;
      const prev = byId.get(m.hostname);
      if (prev && m.machineType === 'worker') continue; // a worker never displaces a record of the same hostname
      byId.set(m.hostname, m);
    }
    for (const [id, spec] of byId) await this.publisher.apply(CLUSTER_NAMESPACE, MEMBER_TYPE, id, spec);
    for (const r of await this.publisher.list(CLUSTER_NAMESPACE, MEMBER_TYPE)) {
      if (!byId.has(r.metadata.id)) await this.publisher.destroy(CLUSTER_NAMESPACE, MEMBER_TYPE, r.metadata.id);
    }
  }

  /** The addresses of the control planes among the published members (to find etcd). */
  async controlPlanes(): Promise<string[]> {
    const list = await this.publisher.list<MemberSpec>(CLUSTER_NAMESPACE, MEMBER_TYPE);
    return list.filter((r) => r.spec.machineType === 'controlplane').flatMap((r) => r.spec.addresses);
  }
}

export interface RegistryHandlerOptions {
  registry: ClusterRegistry;
  etcd: () => Promise<EtcdClient | undefined>;
  /** Worker records at most (default REGISTRY_LIMITS.maxWorkers). */
  maxWorkers?: number;
}

/**
 * The registry's Hello handler as machined serves it on its socket (trustd relays workers' Hello
 * to it, with the node id it derived from the caller's certificate). It checks the record again
 * (trustd is only a relay): a worker, a worker id, within the limits; it writes only under
 * WORKER_PREFIX, refuses a new id when the registry is full, and answers without node ids.
 */
export function registryHandlers(opts: RegistryHandlerOptions): grpc.UntypedServiceImplementation {
  // A backstop behind trustd's own (looser, so that it never refuses what trustd let through).
  const perNode = new RateLimiter({ burst: 10, refillMs: 1000 });
  return {
    Hello: (call: grpc.ServerUnaryCall<{ member?: { node_id?: unknown }; ttl_seconds?: string | number }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      let record: WorkerRecord;
      let ttl: number;
      try {
        const nodeId = String(call.request.member?.node_id ?? '');
        if (!WORKER_ID_PATTERN.test(nodeId)) throw new RegistryRefusal('invalid', 'node_id must be the worker id trustd derives from the caller\'s certificate (w- and 32 hex digits)');
        ttl = workerTtlSeconds(call.request.ttl_seconds);
        record = workerRecord(call.request.member, nodeId);
      } catch (err) {
        const refusal = err instanceof RegistryRefusal;
        return cb({ code: refusal && err.kind === 'denied' ? grpc.status.PERMISSION_DENIED : grpc.status.INVALID_ARGUMENT, details: `invalid member: ${(err as Error).message}` });
      }
      if (!perNode.take(record.nodeId)) return cb({ code: grpc.status.RESOURCE_EXHAUSTED, details: `Hello from ${record.nodeId}: too many calls` });
      void (async () => {
        const client = await opts.etcd();
        if (!client) return cb({ code: grpc.status.UNAVAILABLE, details: 'this node has no running etcd to keep the registry in' });
        try {
          await opts.registry.helloWorker(client, record, ttl, opts.maxWorkers);
          const members = await opts.registry.list(client);
          cb(null, { members: members.map((m) => memberToWire(m, false)) });
        } catch (err) {
          const msg = (err as Error).message;
          cb({ code: err instanceof RegistryFullError ? grpc.status.RESOURCE_EXHAUSTED : grpc.status.UNAVAILABLE, details: msg });
        } finally {
          client.close();
        }
      })();
    },
  };
}
