// etcd's command line, as data: what Bronze sets itself (cluster.etcd.extraArgs cannot change
// these), the defaults extraArgs may override, then extraArgs.
//
// Compaction: etcd keeps every revision of every key until the keyspace is compacted, and the
// member registry rewrites each node's record every 10 s (about 3.5 MB of history per node and
// day). Talos passes etcd no compaction flags: on a Talos cluster kube-apiserver compacts etcd
// every 5 minutes (its --etcd-compaction-interval default). Bronze has no kube-apiserver, so
// etcd compacts itself on the same schedule: periodic mode, keeping 5 minutes of history.
// Space freed by compaction is reused by etcd; EtcdDefragment gives it back to the filesystem.
// The backend quota stays etcd's default (2 GiB), as on Talos.
import path from 'node:path';
import { hostPort } from './addresses.ts';

export const ETCD_CLIENT_PORT = 2379;
export const ETCD_PEER_PORT = 2380;
export const ETCD_METRICS_PORT = 2381;

/** Defaults that cluster.etcd.extraArgs may override (e.g. auto-compaction-retention). */
export const ETCD_DEFAULT_ARGS: Readonly<Record<string, string>> = {
  'auto-compaction-mode': 'periodic',
  'auto-compaction-retention': '5m',
};

export interface EtcdArgsInput {
  name: string;
  dataDir: string;
  /** Holds ca.crt, peer.crt and peer.key. */
  pkiDir: string;
  /** Hosts of the advertised peer and client URLs. */
  advertised: readonly string[];
  /** Hosts to listen on for peers and for clients ("0.0.0.0": every address). */
  listenPeer: readonly string[];
  listenClient: readonly string[];
  /** Where the metrics and /health are served (plain HTTP): a local address. */
  metricsHost: string;
  cluster: { state: 'new' | 'existing'; initial?: string };
  extraArgs: Readonly<Record<string, string>>;
}

const urls = (scheme: string, hosts: readonly string[], port: number) => hosts.map((h) => `${scheme}://${hostPort(h, port)}`).join(',');

/** The peer URLs of a member advertising `hosts`. */
export function peerURLs(hosts: readonly string[]): string[] {
  return hosts.map((h) => `https://${hostPort(h, ETCD_PEER_PORT)}`);
}

/** etcd's arguments (--key=value), in a stable order. */
export function etcdArgs(i: EtcdArgsInput): string[] {
  if (i.advertised.length === 0) throw new Error('etcd: no address to advertise');
  if (i.listenPeer.length === 0 || i.listenClient.length === 0) throw new Error('etcd: no address to listen on');
  const pki = (f: string) => path.join(i.pkiDir, f);
  const bronze: Record<string, string> = {
    name: i.name,
    'data-dir': i.dataDir,
    'listen-peer-urls': urls('https', i.listenPeer, ETCD_PEER_PORT),
    'listen-client-urls': urls('https', i.listenClient, ETCD_CLIENT_PORT),
    'listen-metrics-urls': `http://${hostPort(i.metricsHost, ETCD_METRICS_PORT)}`,
    'advertise-client-urls': urls('https', i.advertised, ETCD_CLIENT_PORT),
    'initial-advertise-peer-urls': urls('https', i.advertised, ETCD_PEER_PORT),
    'client-cert-auth': 'true',
    'cert-file': pki('peer.crt'),
    'key-file': pki('peer.key'),
    'trusted-ca-file': pki('ca.crt'),
    'peer-client-cert-auth': 'true',
    'peer-cert-file': pki('peer.crt'),
    'peer-key-file': pki('peer.key'),
    'peer-trusted-ca-file': pki('ca.crt'),
    'initial-cluster-state': i.cluster.state,
    'experimental-initial-corrupt-check': 'true',
  };
  if (i.cluster.initial) bronze['initial-cluster'] = i.cluster.initial;
  const all = { ...ETCD_DEFAULT_ARGS, ...i.extraArgs, ...bronze };
  return Object.entries(all).map(([k, v]) => `--${k}=${v}`);
}
