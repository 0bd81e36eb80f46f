// The cluster registry: every node publishes who it is (hostname, addresses, machine type, OS)
// and sees every other node as a Member resource (Members.cluster.talos.dev).
//
// The registry lives in etcd, under /bronze/members/<node id>, each record on a lease, so that a
// node that goes away drops out by itself. Control planes write their own record and read the
// others straight from etcd. Workers run no etcd: they say Hello to trustd on a control plane
// (the control-plane endpoint, :50001, with the join token), which writes their record through
// its node's machined and answers with every member. Both refresh every `intervalMs`.
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

export const REGISTRY_PREFIX = '/bronze/members/';

/** How a MemberSpec travels in Hello (Talos's message, talos.resource.definitions.cluster.MemberSpec). */
export function memberToWire(m: MemberSpec): object {
  return {
    node_id: m.nodeId,
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
  /** Workers: say Hello to trustd (host of the control-plane endpoint). */
  worker?: () => { host: string; port: number; token: string; ca: string } | undefined;
  /** Default 10 s; records live three times as long. */
  intervalMs?: number;
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

  async list(client: EtcdClient): Promise<MemberSpec[]> {
    const out: MemberSpec[] = [];
    for (const kv of await client.get(REGISTRY_PREFIX)) {
      try {
        out.push(JSON.parse(kv.value.toString('utf8')) as MemberSpec);
      } catch {
        // a record that is not ours: skip it
      }
    }
    return out;
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

  private async viaTrustd(w: { host: string; port: number; token: string; ca: string }, self: MemberSpec): Promise<MemberSpec[]> {
    const target = `${net.isIPv6(w.host) ? `[${w.host}]` : w.host}:${w.port}`;
    const Registry = serviceClient('bronze.cluster.Registry');
    const client = new Registry(target, new PeerCredentials(Buffer.from(w.ca))) as unknown as grpc.Client & {
      Hello(req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: { members?: unknown[] }) => void): void;
    };
    const md = new grpc.Metadata();
    md.set('token', w.token);
    try {
      return await new Promise((resolve, reject) =>
        client.Hello({ member: memberToWire(self), ttl_seconds: Math.round((this.interval * 3) / 1000) }, md, { deadline: Date.now() + 10_000 }, (err, res) => {
          if (err) reject(new Error(`trustd at ${target}: ${err.details || err.message}`));
          else resolve((res?.members ?? []).map(memberFromWire));
        }),
      );
    } finally {
      client.close();
    }
  }

  /** Makes the Member resources exactly `members` (by hostname, as Talos names them). */
  async publish(members: MemberSpec[]): Promise<void> {
    const byId = new Map<string, MemberSpec>();
    for (const m of members) if (m.hostname) byId.set(m.hostname, m);
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

/** The registry's Hello handler as machined serves it on its socket (trustd relays to it). */
export function registryHandlers(opts: { registry: ClusterRegistry; etcd: () => Promise<EtcdClient | undefined> }): grpc.UntypedServiceImplementation {
  return {
    Hello: (call: grpc.ServerUnaryCall<{ member?: unknown; ttl_seconds?: string | number }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      void (async () => {
        const client = await opts.etcd();
        if (!client) return cb({ code: grpc.status.UNAVAILABLE, details: 'this node has no running etcd to keep the registry in' });
        try {
          const member = memberFromWire(call.request.member ?? {});
          const ttl = Number(call.request.ttl_seconds ?? 0) || 30;
          const members = await opts.registry.hello(client, member, ttl * 1000);
          cb(null, { members: members.map(memberToWire) });
        } catch (err) {
          const msg = (err as Error).message;
          cb({ code: msg.startsWith('invalid member') ? grpc.status.INVALID_ARGUMENT : grpc.status.UNAVAILABLE, details: msg });
        } finally {
          client.close();
        }
      })();
    },
  };
}
