// Which of the node's addresses etcd advertises and listens on, as Talos's etcd SpecController
// chooses them from cluster.etcd.advertisedSubnets and listenSubnets:
//
// - advertised: without advertisedSubnets, the node's first routable address (not loopback, not
//   link-local; IPv4 first); with them, every address they select.
// - listen: listenSubnets, or advertisedSubnets when listenSubnets is not set; without either,
//   every address (0.0.0.0). When set, peers are served on the addresses they select and
//   clients on those and 127.0.0.1 (machined's own calls).
//
// A subnet list is applied in order (Talos's FilterIPs): each subnet adds the addresses it
// holds, each "!subnet" takes away those it holds from what was added before it (so exclusions
// go last, and a list of exclusions alone selects nothing).
import net from 'node:net';
import os from 'node:os';
import { familyOf, isLinkLocal, networkOf, parseCidr, type Prefix } from '../../lib/ip.ts';

function contains(p: Prefix, addr: string): boolean {
  return familyOf(addr) === p.family && networkOf({ address: addr, prefixLength: p.prefixLength }) === networkOf(p);
}

function matches(addr: string, subnet: string): boolean {
  return contains(parseCidr(subnet), addr);
}

/**
 * The addresses of `addrs` that `subnets` select, in the order the subnets add them (Talos's
 * FilterIPs). Throws, naming it, on a subnet that is neither a CIDR nor an address.
 */
export function filterAddresses(addrs: readonly string[], subnets: readonly string[]): string[] {
  const out: string[] = [];
  for (const entry of subnets) {
    const negative = entry.startsWith('!');
    let p: Prefix;
    try {
      p = parseCidr(negative ? entry.slice(1) : entry);
    } catch (err) {
      throw new Error(`etcd subnet ${JSON.stringify(entry)} is not a CIDR or an IP address (${(err as Error).message})`);
    }
    for (const a of addrs) {
      if (!contains(p, a)) continue;
      const at = out.indexOf(a);
      if (!negative && at < 0) out.push(a);
      if (negative && at >= 0) out.splice(at, 1);
    }
  }
  return out;
}

/** Where etcd listens and what it advertises. */
export interface EtcdAddressPlan {
  /** Its peer and client URLs' hosts (the first is the node's etcd address). */
  advertised: string[];
  listenPeer: string[];
  listenClient: string[];
}

const UNSPECIFIED_LISTEN = '0.0.0.0';
const LOOPBACK_LISTEN = '127.0.0.1';

/**
 * Talos's choice of etcd addresses among the node's routable `addrs` (see the top of this file);
 * undefined while there is nothing to advertise or listen on (the node waits for an address).
 * Talos also never advertises its shared virtual IPs; Bronze announces none (config/policy.ts).
 */
export function etcdAddresses(addrs: readonly string[], o: { advertisedSubnets: readonly string[]; listenSubnets: readonly string[] }): EtcdAddressPlan | undefined {
  const advertised = o.advertisedSubnets.length === 0 ? filterAddresses(addrs, ['0.0.0.0/0', '::/0']).slice(0, 1) : filterAddresses(addrs, o.advertisedSubnets);
  const listenSubnets = o.listenSubnets.length > 0 ? o.listenSubnets : o.advertisedSubnets;
  let listenPeer: string[];
  let listenClient: string[];
  if (listenSubnets.length > 0) {
    listenPeer = filterAddresses(addrs, listenSubnets);
    listenClient = [LOOPBACK_LISTEN, ...listenPeer.filter((a) => a !== LOOPBACK_LISTEN)];
  } else {
    listenPeer = [UNSPECIFIED_LISTEN];
    listenClient = [UNSPECIFIED_LISTEN];
  }
  if (advertised.length === 0 || listenPeer.length === 0) return undefined;
  return { advertised, listenPeer, listenClient };
}

/** The node's routable addresses, IPv4 first, in interface order. */
export function nodeAddresses(interfaces = os.networkInterfaces()): string[] {
  const all: string[] = [];
  for (const addrs of Object.values(interfaces)) {
    for (const a of addrs ?? []) if (!a.internal && !isLinkLocal(a.address) && !a.address.startsWith('127.') && a.address !== '::1') all.push(a.address);
  }
  return [...all.filter((a) => familyOf(a) === 'inet4'), ...all.filter((a) => familyOf(a) !== 'inet4')];
}

/**
 * The node's address on the subnet that holds `host` (the control-plane endpoint's), if it has
 * one: the address the cluster reaches it at when the node has several networks (a worker has
 * no etcd address to say so).
 */
export function addressTowards(host: string | undefined, interfaces = os.networkInterfaces()): string | undefined {
  if (!host || net.isIP(host) === 0) return undefined; // a name: no subnet to compare
  for (const addrs of Object.values(interfaces)) {
    for (const a of addrs ?? []) {
      if (a.internal || !a.cidr || familyOf(a.address) !== familyOf(host)) continue;
      if (matches(host, a.cidr) && nodeAddresses({ x: [a] }).length) return a.address;
    }
  }
  return undefined;
}

/** host:port, with brackets for IPv6. */
export function hostPort(host: string, port: number): string {
  return `${familyOf(host) === 'inet6' ? `[${host}]` : host}:${port}`;
}
