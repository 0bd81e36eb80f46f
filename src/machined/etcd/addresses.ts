// Which of the node's addresses etcd advertises: as Talos, the first address that is not
// loopback or link-local (IPv4 first), within cluster.etcd.advertisedSubnets when given ("!" in
// front excludes a subnet).
import net from 'node:net';
import os from 'node:os';
import { familyOf, isLinkLocal, networkOf, parseCidr } from '../../lib/ip.ts';

function matches(addr: string, subnet: string): boolean {
  const cidr = subnet.includes('/') ? subnet : `${subnet}/${familyOf(subnet) === 'inet6' ? 128 : 32}`;
  const p = parseCidr(cidr);
  if (familyOf(addr) !== familyOf(p.address)) return false;
  return networkOf({ address: addr, prefixLength: p.prefixLength }) === networkOf(p);
}

/** Whether `addr` passes the subnet filter (an empty filter passes everything). */
export function inSubnets(addr: string, subnets: readonly string[]): boolean {
  const include = subnets.filter((s) => !s.startsWith('!'));
  const exclude = subnets.filter((s) => s.startsWith('!')).map((s) => s.slice(1));
  if (exclude.some((s) => matches(addr, s))) return false;
  return include.length === 0 || include.some((s) => matches(addr, s));
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

/** The address etcd advertises, or undefined while the node has none (yet). */
export function advertiseAddress(subnets: readonly string[], interfaces = os.networkInterfaces()): string | undefined {
  return nodeAddresses(interfaces).find((a) => inSubnets(a, subnets));
}

/** host:port, with brackets for IPv6. */
export function hostPort(host: string, port: number): string {
  return `${familyOf(host) === 'inet6' ? `[${host}]` : host}:${port}`;
}
