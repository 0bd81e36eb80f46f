// machined's cluster parts, made from what they need: the etcd service (control planes), the
// API's Bootstrap/Etcd* dependencies, the quorum check of Reboot and Shutdown, and the cluster
// registry that publishes the Member resources. main.ts passes the configuration, the
// supervisor's view of etcd, and the state; nothing else.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../../lib/log.ts';
import type { State } from '../../state/state.ts';
import type { ServiceSpec } from '../supervisor/types.ts';
import type { EtcdClient } from '../../etcd/client.ts';
import type { MemberSpec } from '../../contract/resources/member.ts';
import { ApiError } from '../api/common.ts';
import type { EtcdApiDeps } from '../api/etcd.ts';
import type { PowerCheck } from '../api/power.ts';
import { EtcdService } from '../etcd/service.ts';
import { clusterSettingsReader } from '../etcd/config.ts';
import { addressTowards, nodeAddresses } from '../etcd/addresses.ts';
import { type Disruption, memberHealth, quorumRefusal } from '../etcd/quorum.ts';
import { ClusterRegistry, registryHandlers } from './registry.ts';

export interface ClusterPartsOptions {
  log: Logger;
  state: State;
  configText: () => string | undefined;
  /** Where the node's etcd certificate is written (tmpfs). */
  secretsDir: string;
  /** The node's member id: random, kept in STATE (member-id.ts), never an id of the hardware; default the hostname. */
  nodeId: () => string | undefined;
  osVersion: string;
  /** The etcd service's state in the supervisor ('Running', 'Preparing', ...), undefined when absent. */
  etcdState: () => string | undefined;
  stopEtcd: () => Promise<void>;
  /** The host apid listens on: a specific address (host runs) is the node's address. */
  listenHost?: string;
  /** Environment (host runs): BRONZE_ETCD_DIR, BRONZE_ETCD_ADDRESS, BRONZE_HOSTNAME, BRONZE_NODE_ID, BRONZE_ETCD_BIN, BRONZE_REGISTRY_MAX_WORKERS. */
  env?: NodeJS.ProcessEnv;
}

export interface ClusterParts {
  etcd: EtcdService;
  etcdSpec(env: Record<string, string>): ServiceSpec;
  api: EtcdApiDeps;
  powerCheck: PowerCheck;
  /** Throws when `operation` taking this node's etcd member away ('absent' for a while, or 'leave') would break quorum. */
  quorumCheck(operation: string, what: Disruption, hint: string): Promise<void>;
  /** Whether this node is an etcd member whose etcd runs. */
  isMember(): boolean;
  registry: ClusterRegistry;
  /** bronze.cluster.Registry as machined serves it on its socket (trustd relays workers' Hello to it). */
  registryService: ReturnType<typeof registryHandlers>;
}

/** Reboot and Shutdown modes that skip the etcd quorum check (Talos's RebootRequest FORCE). */
function forced(sequence: string, req: { mode?: string | number; force?: boolean }): boolean {
  return req.mode === 'FORCE' || req.mode === 2 || (sequence === 'shutdown' && req.force === true);
}

/** `first` (when it is one of `all`) ahead of the others. */
function firstOf(first: string | undefined, all: string[]): string[] {
  return first && all.includes(first) ? [first, ...all.filter((a) => a !== first)] : all;
}

export function clusterParts(o: ClusterPartsOptions): ClusterParts {
  const env = o.env ?? process.env;
  const settings = clusterSettingsReader(o.configText);
  const pinned = env.BRONZE_ETCD_ADDRESS || undefined;
  const hostname = () => env.BRONZE_HOSTNAME || os.hostname();
  const etcd = new EtcdService({
    log: o.log,
    isControlPlane: () => settings().machineType === 'controlplane',
    settings: () => settings().etcd,
    controlPlaneHost: () => settings().controlPlaneHost,
    dataDir: env.BRONZE_ETCD_DIR || undefined,
    pkiDir: path.join(o.secretsDir, 'etcd'),
    etcdBin: env.BRONZE_ETCD_BIN || undefined,
    etcdctlBin: env.BRONZE_ETCDCTL_BIN || undefined,
    hostname,
    pinnedAddress: pinned,
    retryMs: Number(env.BRONZE_ETCD_RETRY_MS) || undefined,
  });

  const running = () => o.etcdState() === 'Running' && etcd.tls() !== undefined;

  /** Throws (FAILED_PRECONDITION) when `operation` taking this member away would break quorum. */
  const quorumCheck = async (operation: string, what: Disruption, hint: string): Promise<void> => {
    if (!running() || !etcd.hasData()) return;
    let client: EtcdClient | undefined;
    try {
      client = await etcd.cluster();
      let self: string;
      try {
        self = (await client.status(etcd.localEndpoint, 3000)).memberId;
      } catch {
        return; // the local member does not answer: it holds no vote the cluster counts on now
      }
      const why = quorumRefusal(await memberHealth(client), self, what, operation);
      if (why) throw new ApiError(grpc.status.FAILED_PRECONDITION, `${why}${hint ? ` (${hint})` : ''}`);
    } finally {
      client?.close();
    }
  };

  const powerCheck: PowerCheck = async (sequence, req) => {
    if (forced(sequence, req)) return;
    await quorumCheck(sequence, 'absent', sequence === 'reboot' ? '--mode force does it anyway' : '--force does it anyway');
  };

  const self = (): MemberSpec | undefined => {
    const s = settings();
    if (!s.machineType) return undefined;
    const name = hostname();
    return {
      // The registry keys records by it: letters, digits, '.', '_' and '-' (a MAC's colons become '-').
      nodeId: (env.BRONZE_NODE_ID || o.nodeId() || name).replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 128),
      // The address etcd advertises first (the cluster's network, when the node has several);
      // a worker's, the one on the control-plane endpoint's subnet.
      addresses: pinned ? [pinned] : o.listenHost && !['::', '0.0.0.0'].includes(o.listenHost) ? [o.listenHost] : firstOf(etcd.address ?? addressTowards(s.controlPlaneHost), nodeAddresses()),
      hostname: name,
      machineType: s.machineType,
      operatingSystem: `Bronze (${o.osVersion})`,
    };
  };

  const registry = new ClusterRegistry({
    log: o.log,
    state: o.state,
    self,
    etcd: async () => (running() ? etcd.cluster().catch(() => undefined) : undefined),
    // Workers run no etcd: they ask trustd on the control-plane endpoint, with the join token,
    // presenting the API certificate trustd issued them (none yet: not until it has).
    worker: () => {
      const s = settings();
      if (s.machineType !== 'worker' || !s.controlPlaneHost || !s.token || !s.osCaCrt) return undefined;
      let cert: string;
      let key: string;
      try {
        key = fs.readFileSync(path.join(o.secretsDir, 'apid', 'server.key'), 'utf8');
        cert = fs.readFileSync(path.join(o.secretsDir, 'apid', 'server.crt'), 'utf8');
      } catch {
        return undefined;
      }
      return { host: s.controlPlaneHost, port: Number(env.BRONZE_TRUSTD_PORT) || 50001, token: s.token, ca: s.osCaCrt, cert, key };
    },
    intervalMs: Number(env.BRONZE_REGISTRY_INTERVAL_MS) || undefined,
  });

  return {
    etcd,
    etcdSpec: (e) => etcd.spec(e),
    api: { etcd, stopEtcd: o.stopEtcd, running: () => o.etcdState() === 'Running', log: (m) => o.log.info(m) },
    powerCheck,
    quorumCheck,
    isMember: () => running() && etcd.hasData(),
    registry,
    registryService: registryHandlers({
      registry,
      etcd: async () => (running() ? etcd.cluster().catch(() => undefined) : undefined),
      maxWorkers: Number(env.BRONZE_REGISTRY_MAX_WORKERS) || undefined,
    }),
  };
}
