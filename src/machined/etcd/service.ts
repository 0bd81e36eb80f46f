// etcd as a supervised service of control-plane nodes, as Talos runs it:
//
// - condition: the node's configuration is a control plane with the etcd CA (cluster.etcd.ca);
//   elsewhere the service is Skipped and costs nothing.
// - pre state (Talos's PreFunc): the data directory on EPHEMERAL (/var/lib/etcd), the node's
//   own peer/server certificate from the etcd CA, then one of:
//     * data already there: start with it (initial-cluster-state=existing);
//     * `bronzectl bootstrap` was called: a new one-member cluster (or one recovered from the
//       snapshot uploaded with EtcdRecover);
//     * otherwise join by itself: find the cluster through the control-plane endpoint (and the
//       control planes it knows of), add itself as a learner, and start; it is promoted to a
//       voting member once it has caught up (a loop here, as Talos's).
//   While neither is possible it waits in Preparing, saying why.
// - health: etcd's own /health on its metrics URL (127.0.0.1:2381).
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { spawn } from 'node:child_process';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../../lib/log.ts';
import type { ServiceSpec } from '../supervisor/types.ts';
import { writeFileAtomic } from '../../lib/atomic.ts';
import { daemonUser, ensureEtcdDirs } from '../../lib/daemon-users.ts';
import type { CertAndKey } from '../../pki/ca.ts';
import { ApiError } from '../api/common.ts';
import { EtcdClient, EtcdError, type EtcdMember, type EtcdTls } from '../../etcd/client.ts';
import { etcdAddresses, hostPort, nodeAddresses, type EtcdAddressPlan } from './addresses.ts';
import { ETCD_CLIENT_PORT, ETCD_METRICS_PORT, etcdArgs, peerURLs } from './args.ts';
import type { EtcdSettings } from './config.ts';

export interface EtcdServiceOptions {
  log: Logger;
  /** The node is a control plane (its configuration says so). */
  isControlPlane: () => boolean;
  /** The etcd settings of the running configuration. */
  settings: () => EtcdSettings | undefined;
  /** Host of cluster.controlPlane.endpoint: where a joining node looks for the cluster. */
  controlPlaneHost: () => string | undefined;
  /** Addresses of the other control planes the node knows (Members), to find the cluster too. */
  knownControlPlanes?: () => string[];
  /** Default /var/lib/etcd (EPHEMERAL). */
  dataDir?: string;
  /** Where the certificates go (tmpfs): default <secrets>/etcd. */
  pkiDir: string;
  /** The etcd and etcdctl binaries (the rootfs's, or the host's in tests). */
  etcdBin?: string;
  etcdctlBin?: string;
  hostname?: () => string;
  /** The node's addresses, for the certificate and the advertised URLs (tests pin them). */
  interfaces?: () => NodeJS.Dict<os.NetworkInterfaceInfo[]>;
  /** Between join attempts, ms (default 5000). */
  retryMs?: number;
  /** Between promotion attempts, ms (default 3000). */
  promoteEveryMs?: number;
  /**
   * Host runs (several nodes on one host's loopback): etcd advertises this address and listens on
   * it alone, its metrics too, instead of the addresses cluster.etcd's subnets choose.
   */
  pinnedAddress?: string;
}

type Pending = { kind: 'bootstrap' } | { kind: 'recover'; skipHashCheck: boolean };

/** Where EtcdRecover leaves the uploaded snapshot until Bootstrap uses it (as Talos). */
export function recoverySnapshotPath(dataDir: string): string {
  return `${dataDir.replace(/\/$/, '')}.snapshot`;
}

export class EtcdService {
  readonly dataDir: string;
  private pending: Pending | undefined;
  private wake: (() => void) | undefined;
  /** What the pre state is doing: waiting (for bootstrap or a cluster to join), or done. */
  private phase: 'idle' | 'waiting' | 'starting' = 'idle';
  private promoting: NodeJS.Timeout | undefined;
  private tlsCache: EtcdTls | undefined;
  /** What etcd advertises and listens on (after the pre state). */
  private plan: EtcdAddressPlan | undefined;
  /** The member id of this node, once known. */
  memberId: string | undefined;

  constructor(private readonly o: EtcdServiceOptions) {
    this.dataDir = o.dataDir ?? '/var/lib/etcd';
  }

  private get hostname(): string {
    return (this.o.hostname ?? os.hostname)();
  }

  /** Where etcd listens for this node's own calls (clients and metrics). */
  private get localHost(): string {
    return this.o.pinnedAddress ?? '127.0.0.1';
  }

  /** The local member's client endpoint. */
  get localEndpoint(): string {
    return hostPort(this.localHost, ETCD_CLIENT_PORT);
  }

  /** Whether this node has etcd data (is, or was, a member). */
  hasData(): boolean {
    try {
      return fs.readdirSync(path.join(this.dataDir, 'member')).length > 0;
    } catch {
      return false;
    }
  }

  private get etcdctl(): string {
    return this.o.etcdctlBin ?? '/usr/sbin/etcdctl';
  }

  /** The node is a control plane (runs etcd). */
  isControlPlane(): boolean {
    return this.o.isControlPlane();
  }

  /** Waiting in its pre state for `bronzectl bootstrap` or a cluster to join. */
  get waiting(): boolean {
    return this.phase === 'waiting';
  }

  /** The supervisor's spec. */
  spec(env: Record<string, string>): ServiceSpec {
    const user = daemonUser('etcd');
    return {
      id: 'etcd',
      dependsOn: ['apid', 'networkd'],
      command: this.o.etcdBin ?? '/usr/sbin/etcd',
      env: { ...env, ETCD_UNSUPPORTED_ARCH: process.arch === 'arm64' ? 'arm64' : '' },
      condition: () => this.o.isControlPlane() && this.o.settings()?.ca !== undefined,
      // Under its own user (Talos's EtcdUserID), with no capability, where daemon users are on.
      ...(user ? { user } : {}),
      prepare: async (signal, report) => {
        const got = await this.prepare(signal, report);
        if (user) ensureEtcdDirs({ dataDir: this.dataDir, pkiDir: this.o.pkiDir });
        return got;
      },
      healthCheck: () => this.health(),
      healthInterval: 5000,
      stopTimeout: 20_000,
      restart: 'always',
    };
  }

  // --- certificates ---

  /** The node's etcd certificate (peer, server and client: etcd's and machined's), written for etcd. */
  private async pki(ca: CertAndKey, advertised: readonly string[]): Promise<EtcdTls> {
    const { issuePeerCert } = await import('../../pki/certs.ts');
    const ifaces = this.o.interfaces?.();
    const ips = [...new Set([...advertised, ...(this.o.pinnedAddress ? [] : nodeAddresses(ifaces)), '127.0.0.1', '::1'])];
    const cert = await issuePeerCert(ca, { commonName: this.hostname, dnsNames: [this.hostname, 'localhost'], ipAddresses: ips, ttlMs: 365 * 24 * 3600_000 });
    fs.mkdirSync(this.o.pkiDir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(path.join(this.o.pkiDir, 'ca.crt'), ca.crt);
    await writeFileAtomic(path.join(this.o.pkiDir, 'peer.key'), cert.key);
    await writeFileAtomic(path.join(this.o.pkiDir, 'peer.crt'), cert.crt);
    this.tlsCache = { ca: ca.crt, cert: cert.crt, key: cert.key };
    return this.tlsCache;
  }

  /** Client credentials for etcd (the node's own certificate), once the pre state has made them. */
  tls(): EtcdTls | undefined {
    if (this.tlsCache) return this.tlsCache;
    try {
      const r = (f: string) => fs.readFileSync(path.join(this.o.pkiDir, f), 'utf8');
      this.tlsCache = { ca: r('ca.crt'), cert: r('peer.crt'), key: r('peer.key') };
    } catch {
      return undefined;
    }
    return this.tlsCache;
  }

  // --- the pre state ---

  private args(name: string, plan: EtcdAddressPlan, settings: EtcdSettings, cluster: { state: 'new' | 'existing'; initial?: string }): string[] {
    return etcdArgs({
      name,
      dataDir: this.dataDir,
      pkiDir: this.o.pkiDir,
      ...plan,
      metricsHost: this.localHost,
      cluster,
      extraArgs: settings.extraArgs,
    });
  }

  /** Where etcd listens and what it advertises: cluster.etcd's subnets, or the pinned address. */
  private addressPlan(settings: EtcdSettings): EtcdAddressPlan | undefined {
    const pinned = this.o.pinnedAddress;
    if (pinned) return { advertised: [pinned], listenPeer: [pinned], listenClient: [pinned] };
    return etcdAddresses(nodeAddresses(this.o.interfaces?.()), settings);
  }

  private async prepare(signal: AbortSignal, report: (m: string) => void): Promise<{ args: string[] }> {
    const settings = this.o.settings();
    if (!settings?.ca) throw new Error('cluster.etcd.ca is missing from the machine configuration');
    fs.mkdirSync(this.dataDir, { recursive: true, mode: 0o700 });
    fs.chmodSync(this.dataDir, 0o700);

    // Addresses to advertise and listen on (DHCP may still be on its way).
    let plan: EtcdAddressPlan | undefined;
    while (!(plan = this.addressPlan(settings))) {
      if (signal.aborted) throw new Error('stopped');
      const subnets = [...settings.advertisedSubnets, ...settings.listenSubnets];
      report(`Waiting for an address to advertise and listen on${subnets.length ? ` (within cluster.etcd subnets ${subnets.join(', ')})` : ''}`);
      await this.sleep(1000, signal);
    }
    this.plan = plan;
    await this.pki(settings.ca, plan.advertised);
    const name = this.hostname;
    const initialSelf = peerURLs(plan.advertised).map((u) => `${name}=${u}`).join(',');

    if (this.hasData()) {
      this.phase = 'starting';
      this.o.log.info(`etcd: starting with the data in ${this.dataDir}`);
      this.promoteIfLearner();
      return { args: this.args(name, plan, settings, { state: 'existing' }) };
    }

    this.phase = 'waiting';
    try {
      for (;;) {
        if (signal.aborted) throw new Error('stopped');
        const pending = this.pending;
        this.pending = undefined;
        if (pending?.kind === 'bootstrap') {
          this.o.log.info('etcd: bootstrapping a new cluster on this node');
          return { args: this.args(name, plan, settings, { state: 'new', initial: initialSelf }) };
        }
        if (pending?.kind === 'recover') {
          await this.restore(name, plan.advertised, initialSelf, pending.skipHashCheck);
          this.o.log.info('etcd: recovered a new cluster from the uploaded snapshot');
          return { args: this.args(name, plan, settings, { state: 'new', initial: initialSelf }) };
        }
        const candidates = this.candidates();
        if (candidates.length === 0) {
          report('Waiting for bootstrap (no control-plane endpoint to join through)');
        } else {
          try {
            const initial = await this.join(name, plan.advertised, candidates);
            this.promoteIfLearner();
            return { args: this.args(name, plan, settings, { state: 'existing', initial }) };
          } catch (err) {
            report(`Waiting for bootstrap or to join the cluster at ${candidates.join(', ')}: ${(err as Error).message}`);
          }
        }
        await this.sleep(this.o.retryMs ?? 5000, signal);
      }
    } finally {
      this.phase = 'starting';
    }
  }

  /** Where a joining node looks for the cluster: the control-plane endpoint and the known control planes. */
  private candidates(): string[] {
    const hosts = [this.o.controlPlaneHost?.(), ...(this.o.knownControlPlanes?.() ?? [])].filter((h): h is string => !!h);
    const mine = new Set([...(this.o.pinnedAddress ? [this.o.pinnedAddress] : nodeAddresses(this.o.interfaces?.())), '127.0.0.1', '::1', 'localhost']);
    return [...new Set(hosts.filter((h) => !mine.has(h)).map((h) => hostPort(h, ETCD_CLIENT_PORT)))];
  }

  /** Adds this node to the cluster at `candidates` as a learner; the initial-cluster to start with. */
  private async join(name: string, advertised: readonly string[], candidates: string[]): Promise<string> {
    const client = new EtcdClient(candidates, this.tls()!, { timeoutMs: 5000 });
    try {
      const urls = peerURLs(advertised);
      const atMyURL = (m: EtcdMember) => m.peerURLs.some((u) => urls.includes(u));
      let members = await client.memberList();
      // The data directory is empty: a member under this name, or at this peer URL, that has
      // started is this node before (a reset or a wiped EPHEMERAL), and must go first (Talos).
      let mine = members.find((m) => atMyURL(m) && m.name === '');
      for (const m of members) {
        if (m !== mine && (m.name === name || atMyURL(m))) {
          this.o.log.info(`etcd: removing the stale member ${m.id} (${m.name || m.peerURLs.join(',')}) before joining`);
          await client.memberRemove(m.id);
        }
      }
      if (!mine) {
        const added = await client.memberAdd(urls, true);
        mine = added.added;
        members = added.members;
        this.o.log.info(`etcd: added this node as learner ${mine.id} through ${candidates.join(', ')}`);
      } else {
        members = await client.memberList();
      }
      this.memberId = mine.id;
      return initialCluster(members, mine.id, name);
    } finally {
      client.close();
    }
  }

  /** etcdctl snapshot restore of the uploaded snapshot into the (empty) data directory. */
  private async restore(name: string, advertised: readonly string[], initial: string, skipHashCheck: boolean): Promise<void> {
    const snapshot = recoverySnapshotPath(this.dataDir);
    const bin = this.etcdctl;
    fs.rmSync(this.dataDir, { recursive: true, force: true });
    const args = ['snapshot', 'restore', snapshot, `--name=${name}`, `--initial-cluster=${initial}`, `--initial-advertise-peer-urls=${peerURLs(advertised).join(',')}`, `--data-dir=${this.dataDir}`];
    if (skipHashCheck) args.push('--skip-hash-check=true');
    await new Promise<void>((resolve, reject) => {
      const child = spawn(bin, args, { env: { ETCDCTL_API: '3' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`etcdctl snapshot restore: exit ${code}: ${out.trim().split('\n').slice(-3).join('; ')}`))));
    });
    fs.chmodSync(this.dataDir, 0o700);
    fs.rmSync(snapshot, { force: true });
  }

  /** After a learner starts, promote it once it has caught up (etcd refuses before). */
  private promoteIfLearner(): void {
    clearTimeout(this.promoting);
    let failures = 0;
    let tried = false;
    const attempt = async (): Promise<void> => {
      const tls = this.tls();
      if (!tls) return;
      const client = new EtcdClient([this.localEndpoint], tls, { timeoutMs: 5000 });
      try {
        const status = await client.status(this.localEndpoint);
        this.memberId = status.memberId;
        if (!status.isLearner) {
          // A voting member: done. A promote whose answer was lost (a timeout under load) still
          // promoted it; say so, as the console is how operators follow a join.
          if (tried) this.o.log.info(`etcd: promoted learner ${status.memberId} to a voting member (its status says so)`);
          return;
        }
        // A learner serves no MemberList (etcd 3.4): ask the voters it knows, else the ones it joined through.
        const members = await client.memberList().catch(() => [] as EtcdMember[]);
        const others = members.filter((m) => m.id !== status.memberId && !m.isLearner).flatMap((m) => m.clientURLs);
        const cluster = new EtcdClient([...others, ...this.candidates()], tls, { timeoutMs: 5000 });
        try {
          tried = true;
          await cluster.memberPromote(status.memberId);
          this.o.log.info(`etcd: promoted learner ${status.memberId} to a voting member`);
          return;
        } finally {
          cluster.close();
        }
      } catch (err) {
        // not started, or not caught up yet ("can only promote a learner member which is in sync with leader")
        if (++failures % 10 === 0) this.o.log.info(`etcd: not promoted yet: ${(err as Error).message}`);
      } finally {
        client.close();
      }
      this.promoting = setTimeout(() => void attempt(), this.o.promoteEveryMs ?? 3000);
      this.promoting.unref();
    };
    this.promoting = setTimeout(() => void attempt(), 1000);
    this.promoting.unref();
  }

  // --- health ---

  async health(): Promise<void> {
    const res = await fetch(`http://${hostPort(this.localHost, ETCD_METRICS_PORT)}/health`, { signal: AbortSignal.timeout(4000) });
    const body = (await res.json().catch(() => ({}))) as { health?: string; reason?: string };
    if (body.health !== 'true') throw new Error(`etcd is not healthy${body.reason ? `: ${body.reason}` : ''}`);
  }

  // --- Bootstrap and EtcdRecover ---

  /**
   * The Bootstrap RPC: refuses on a worker, on a node that is a member already, and where the
   * cluster exists already (found through the control-plane endpoint: this node joins it by
   * itself); else the waiting pre state starts a new cluster.
   */
  async bootstrap(o: { recover: boolean; skipHashCheck: boolean }): Promise<void> {
    if (!this.o.isControlPlane()) throw new ApiError(grpc.status.FAILED_PRECONDITION, 'bootstrap is only available on control plane nodes');
    if (this.hasData()) throw new ApiError(grpc.status.ALREADY_EXISTS, 'etcd data directory is not empty');
    if (!this.waiting) throw new ApiError(grpc.status.FAILED_PRECONDITION, 'bootstrap is not available yet: etcd is not waiting for it (see bronzectl service etcd)');
    const candidates = this.candidates();
    const tls = this.tls();
    if (candidates.length && tls) {
      const client = new EtcdClient(candidates, tls, { timeoutMs: 3000 });
      try {
        const members = await client.memberList();
        throw new ApiError(grpc.status.ALREADY_EXISTS, `the etcd cluster is bootstrapped already (${members.length} member${members.length === 1 ? '' : 's'} at ${client.endpoints.join(', ')}): this node joins it by itself`);
      } catch (err) {
        if (err instanceof ApiError) throw err;
        // nothing answers: no cluster yet
      } finally {
        client.close();
      }
    }
    if (o.recover && !fs.existsSync(this.etcdctl)) {
      throw new ApiError(grpc.status.FAILED_PRECONDITION, `etcd recovery needs etcdctl (${this.etcdctl}), which this image does not carry`);
    }
    if (o.recover && !fs.existsSync(recoverySnapshotPath(this.dataDir))) {
      throw new ApiError(grpc.status.FAILED_PRECONDITION, 'no etcd snapshot to recover from: upload one first (bronzectl bootstrap --recover-from <file>)');
    }
    this.pending = o.recover ? { kind: 'recover', skipHashCheck: o.skipHashCheck } : { kind: 'bootstrap' };
    this.wake?.();
  }

  /** EtcdRecover: keeps the uploaded snapshot for Bootstrap{recover_etcd}. */
  async recoverUpload(chunks: AsyncIterable<Buffer>): Promise<number> {
    if (!this.o.isControlPlane()) throw new ApiError(grpc.status.FAILED_PRECONDITION, 'etcd recovery is only available on control plane nodes');
    if (this.hasData()) throw new ApiError(grpc.status.FAILED_PRECONDITION, 'etcd data directory is not empty: this node is a member already (reset it first)');
    const file = recoverySnapshotPath(this.dataDir);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const part = `${file}.part`;
    const fd = fs.openSync(part, 'w', 0o600);
    let size = 0;
    try {
      for await (const c of chunks) {
        fs.writeSync(fd, c);
        size += c.length;
      }
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    if (size === 0) {
      fs.rmSync(part, { force: true });
      throw new ApiError(grpc.status.INVALID_ARGUMENT, 'the snapshot is empty');
    }
    fs.renameSync(part, file);
    return size;
  }

  // --- the cluster ---

  /** A client of the cluster: the local member first, then every member's client URLs. */
  async cluster(): Promise<EtcdClient> {
    const tls = this.tls();
    if (!tls) throw new ApiError(grpc.status.FAILED_PRECONDITION, 'etcd is not running on this node');
    const local = new EtcdClient([this.localEndpoint], tls, { timeoutMs: 5000 });
    let urls: string[] = [];
    try {
      urls = (await local.memberList()).flatMap((m) => m.clientURLs);
    } catch {
      // the local member cannot answer (a learner answers Status only): ask the others we know
      urls = this.candidates();
    } finally {
      local.close();
    }
    return new EtcdClient([this.localEndpoint, ...urls], tls, { timeoutMs: 5000 });
  }

  /** The advertised address (after the pre state). */
  get address(): string | undefined {
    return this.plan?.advertised[0];
  }

  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      this.wake = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }

  stop(): void {
    clearTimeout(this.promoting);
  }
}

/** etcd's --initial-cluster for a member joining `members`: name=peerURL for each, this node's under `name`. */
export function initialCluster(members: EtcdMember[], myId: string, name: string): string {
  const parts: string[] = [];
  for (const m of members) {
    const n = m.id === myId ? name : m.name || `pending-${m.id}`;
    for (const u of m.peerURLs) parts.push(`${n}=${u}`);
  }
  return parts.join(',');
}

export { EtcdError };
