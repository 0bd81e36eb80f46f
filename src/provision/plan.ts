// The shape of a cluster before anything starts (pure): each node's name, type, address on the
// bridge, MAC and tap name, and each node's machine configuration made from the generated one.
// Names and addresses follow talosctl's: <cluster>-controlplane-1.., <cluster>-worker-1..; the
// gateway is the network's first address, the nodes take the ones after it, control planes first.
import { createHash } from 'node:crypto';
import YAML from 'yaml';
import { bytesToIp, ipToBytes, networkOf, parseCidr } from '../lib/ip.ts';
import type { NodeType } from './state.ts';

/** talosctl's default network for a cluster (bronzectl cluster create --cidr). */
export const DEFAULT_CIDR = '10.5.0.0/24';

/** QEMU's user network gives every VM's card this MAC unless told otherwise: the API's link. */
export const USER_NET_MAC = '52:54:00:12:34:56';

export interface PlannedNode {
  name: string;
  type: NodeType;
  ip: string;
  mac: string;
  tap: string;
}

export interface ClusterPlan {
  cidr: string;
  prefixLength: number;
  gateway: string;
  nodes: PlannedNode[];
}

function addToIp(base: string, n: number): string {
  const b = ipToBytes(base);
  const v = (b.readUInt32BE(0) + n) >>> 0;
  const out = Buffer.alloc(4);
  out.writeUInt32BE(v);
  return bytesToIp(out);
}

export function planCluster(name: string, cidr: string, controlplanes: number, workers: number): ClusterPlan {
  if (!Number.isInteger(controlplanes) || controlplanes < 1) throw new Error(`--controlplanes ${controlplanes}: a cluster needs at least one control plane`);
  if (!Number.isInteger(workers) || workers < 0) throw new Error(`--workers ${workers}: expected 0 or more`);
  let p;
  try {
    p = parseCidr(cidr);
  } catch (e) {
    throw new Error(`--cidr ${JSON.stringify(cidr)}: ${(e as Error).message}`);
  }
  if (p.address.includes(':')) throw new Error(`--cidr ${cidr}: an IPv4 network is expected`);
  const total = controlplanes + workers;
  // The network address, the gateway, the nodes and the broadcast address must fit.
  const room = 2 ** (32 - p.prefixLength);
  if (total + 3 > room) throw new Error(`--cidr ${cidr}: room for ${Math.max(0, room - 3)} nodes, ${total} asked for`);
  const network = networkOf(p);
  const hash = createHash('sha256').update(name).digest();
  const nodes: PlannedNode[] = [];
  for (let i = 0; i < total; i++) {
    const type: NodeType = i < controlplanes ? 'controlplane' : 'worker';
    const n = type === 'controlplane' ? i + 1 : i - controlplanes + 1;
    nodes.push({
      name: `${name}-${type}-${n}`,
      type,
      ip: addToIp(network, 2 + i),
      // Locally administered, unique per cluster (by its name) and per node.
      mac: ['52', '54', hash[0]!.toString(16).padStart(2, '0'), hash[1]!.toString(16).padStart(2, '0'), hash[2]!.toString(16).padStart(2, '0'), (i + 1).toString(16).padStart(2, '0')].join(':'),
      // At most 15 characters (IFNAMSIZ): bz + 6 hex of the name + - + index.
      tap: `bz${hash.subarray(0, 3).toString('hex')}-${i + 1}`,
    });
  }
  return { cidr: `${network}/${p.prefixLength}`, prefixLength: p.prefixLength, gateway: addToIp(network, 1), nodes };
}

/**
 * A node's configuration: the generated one for its type, with its hostname, its link on the
 * bridge (a static address, found by MAC), DHCP on QEMU's user network (which carries the API),
 * and, on a control plane, etcd advertising its address on the bridge.
 */
export function nodeConfig(generated: string, node: PlannedNode, plan: ClusterPlan): string {
  const docs = YAML.parseAllDocuments(generated);
  const v1 = docs.find((d) => (d.toJS() as { machine?: unknown } | null)?.machine !== undefined);
  if (!v1) throw new Error('the generated configuration has no v1alpha1 document');
  v1.setIn(['machine', 'network', 'hostname'], node.name);
  v1.setIn(['machine', 'network', 'interfaces'], [
    { deviceSelector: { hardwareAddr: node.mac }, dhcp: false, addresses: [`${node.ip}/${plan.prefixLength}`] },
    { deviceSelector: { hardwareAddr: USER_NET_MAC }, dhcp: true },
  ]);
  if (node.type === 'controlplane') v1.setIn(['cluster', 'etcd', 'advertisedSubnets'], [plan.cidr]);
  return docs.map((d) => d.toString()).join('');
}
