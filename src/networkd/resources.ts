// What networkd publishes, computed from what it observes: pure functions from the kernel's
// links, addresses and routes (and the DHCP leases and configuration) to resource specs, and
// the text of /etc/resolv.conf and /etc/hosts. The manager publishes their output.
import { isLinkLocal, isLoopback } from './ip.ts';
import {
  ADDRESS_TYPE,
  HOSTNAME_STATUS_TYPE,
  LINK_TYPE,
  NODE_ADDRESS_TYPE,
  RESOLVER_TYPE,
  ROUTE_TYPE,
  TIME_SERVER_TYPE,
} from './definitions.ts';
import { ARPHRD_ETHER, type Address, IFA_F, IFF, type Link, RT_TABLE, type Route, protocolName, routeTypeName, scopeName } from './netlink.ts';

export interface LinkSpec {
  index: number;
  /** 'ether', 'loopback', ... */
  type: string;
  /** 'vlan', 'veth', 'bridge', ...; '' for hardware. */
  kind: string;
  hardwareAddr: string;
  permanentAddr: string;
  broadcastAddr: string;
  mtu: number;
  /** 'UP,BROADCAST,RUNNING,MULTICAST,LOWER_UP'. */
  flags: string;
  /** Administratively up. */
  up: boolean;
  /** Carrier (IFF_LOWER_UP). */
  linkState: boolean;
  operationalState: string;
  /** Parent link (a VLAN's), 0 for none. */
  linkIndex: number;
  masterIndex: number;
  slaveKind: string;
  physical: boolean;
  vlan?: { vlanID: number; protocol: string };
}

export interface AddressSpec {
  /** 'a.b.c.d/n'. */
  address: string;
  family: 'inet4' | 'inet6';
  linkIndex: number;
  linkName: string;
  scope: string;
  flags: string;
  broadcast?: string;
  /** Seconds left when last seen; absent for forever. */
  validLifetime?: number;
  preferredLifetime?: number;
}

export interface RouteSpec {
  family: 'inet4' | 'inet6';
  /** '' for a default route (as talosctl shows it). */
  destination: string;
  gateway: string;
  source: string;
  outLinkIndex: number;
  outLinkName: string;
  table: string;
  priority: number;
  scope: string;
  type: string;
  protocol: string;
  mtu?: number;
}

export interface ResolverSpec {
  dnsServers: string[];
  searchDomains: string[];
}

export interface HostnameSpec {
  hostname: string;
  domainname: string;
}

export interface NodeAddressSpec {
  addresses: string[];
}

export interface TimeServerSpec {
  timeServers: string[];
}

const FLAG_NAMES: Array<[number, string]> = [
  [IFF.UP, 'UP'],
  [IFF.BROADCAST, 'BROADCAST'],
  [IFF.LOOPBACK, 'LOOPBACK'],
  [IFF.POINTOPOINT, 'POINTOPOINT'],
  [IFF.RUNNING, 'RUNNING'],
  [IFF.NOARP, 'NOARP'],
  [IFF.MULTICAST, 'MULTICAST'],
  [IFF.LOWER_UP, 'LOWER_UP'],
  [IFF.DORMANT, 'DORMANT'],
];

/** Plain hardware: an Ethernet link that no driver kind (veth, vlan, bridge, ...) made. */
export function isPhysical(l: Link): boolean {
  return l.type === ARPHRD_ETHER && !l.loopback && l.kind === undefined;
}

export function linkSpec(l: Link): LinkSpec {
  const spec: LinkSpec = {
    index: l.index,
    type: l.typeName,
    kind: l.kind ?? '',
    hardwareAddr: l.mac,
    permanentAddr: l.permanentMac ?? l.mac,
    broadcastAddr: l.broadcast,
    mtu: l.mtu,
    flags: FLAG_NAMES.filter(([bit]) => l.flags & bit)
      .map(([, n]) => n)
      .join(','),
    up: l.up,
    linkState: l.lowerUp,
    operationalState: l.operState,
    linkIndex: l.parent ?? 0,
    masterIndex: l.master ?? 0,
    slaveKind: l.slaveKind ?? '',
    physical: isPhysical(l),
  };
  if (l.vlan) spec.vlan = { vlanID: l.vlan.id, protocol: l.vlan.protocol };
  return spec;
}

function addressFlags(flags: number): string {
  const names: Array<[number, string]> = [
    [IFA_F.SECONDARY, 'secondary'],
    [IFA_F.NODAD, 'nodad'],
    [IFA_F.DADFAILED, 'dadfailed'],
    [IFA_F.DEPRECATED, 'deprecated'],
    [IFA_F.TENTATIVE, 'tentative'],
    [IFA_F.PERMANENT, 'permanent'],
    [IFA_F.NOPREFIXROUTE, 'noprefixroute'],
  ];
  return names
    .filter(([bit]) => flags & bit)
    .map(([, n]) => n)
    .join(',');
}

export function addressId(a: Address, linkName: string): string {
  return `${linkName}/${a.address}/${a.prefixLength}`;
}

export function addressSpec(a: Address, linkName: string): AddressSpec {
  const spec: AddressSpec = {
    address: `${a.address}/${a.prefixLength}`,
    family: a.family,
    linkIndex: a.index,
    linkName,
    scope: scopeName(a.scope),
    flags: addressFlags(a.flags),
  };
  if (a.broadcast) spec.broadcast = a.broadcast;
  if (a.validLifetime !== undefined) spec.validLifetime = a.validLifetime;
  if (a.preferredLifetime !== undefined) spec.preferredLifetime = a.preferredLifetime;
  return spec;
}

function isDefaultDst(dst: string): boolean {
  return dst === '0.0.0.0/0' || dst === '::/0';
}

/** Talos's naming: '<family>/<gateway>/<destination>/<metric>' ('inet4/10.0.0.1//1024'). */
export function routeId(r: Route): string {
  const dst = isDefaultDst(r.dst) ? '' : r.dst;
  const table = r.table === RT_TABLE.MAIN ? '' : `/table${r.table}`;
  return `${r.family}/${r.gateway ?? ''}/${dst}/${r.priority}${table}`;
}

export function tableName(t: number): string {
  return t === RT_TABLE.MAIN ? 'main' : t === RT_TABLE.LOCAL ? 'local' : String(t);
}

export function routeSpec(r: Route, linkName: string): RouteSpec {
  const spec: RouteSpec = {
    family: r.family,
    destination: isDefaultDst(r.dst) ? '' : r.dst,
    gateway: r.gateway ?? '',
    source: r.prefsrc ?? '',
    outLinkIndex: r.oif ?? 0,
    outLinkName: linkName,
    table: tableName(r.table),
    priority: r.priority,
    scope: scopeName(r.scope),
    type: routeTypeName(r.type),
    protocol: protocolName(r.protocol),
  };
  if (r.mtu) spec.mtu = r.mtu;
  return spec;
}

/** The routes worth showing: every table but the kernel's local one, no multicast/cache. */
export function publishedRoute(r: Route): boolean {
  return r.table !== RT_TABLE.LOCAL && routeTypeName(r.type) !== 'multicast';
}

/**
 * The node's addresses: global-scope, non-loopback, non-link-local, not failed DAD, on links
 * that are not loopback; IPv4 first, then by link index and address.
 */
export function nodeAddresses(addresses: Address[], links: Map<number, Link>): string[] {
  const usable = addresses.filter((a) => {
    const l = links.get(a.index);
    if (!l || l.loopback) return false;
    if (isLoopback(a.address) || isLinkLocal(a.address)) return false;
    if (a.flags & IFA_F.DADFAILED) return false;
    return a.scope === 0;
  });
  usable.sort(
    (x, y) =>
      (x.family === y.family ? 0 : x.family === 'inet4' ? -1 : 1) ||
      x.index - y.index ||
      (x.flags & IFA_F.SECONDARY) - (y.flags & IFA_F.SECONDARY) ||
      (x.address < y.address ? -1 : x.address > y.address ? 1 : 0),
  );
  return [...new Set(usable.map((a) => `${a.address}/${a.prefixLength}`))];
}

// ---------------------------------------------------------------------------------------------
// Files.

/** glibc reads at most three nameservers (MAXNS). */
const MAXNS = 3;

export function renderResolvConf(r: ResolverSpec): string {
  const lines = ['# Generated by Bronze networkd.'];
  for (const ns of r.dnsServers.slice(0, MAXNS)) lines.push(`nameserver ${ns}`);
  if (r.searchDomains.length > 0) lines.push(`search ${r.searchDomains.join(' ')}`);
  return `${lines.join('\n')}\n`;
}

export function renderHosts(h: HostnameSpec, nodeAddress: string | undefined, extra: Array<{ ip: string; aliases: string[] }> = []): string {
  const fqdn = h.domainname ? `${h.hostname}.${h.domainname}` : h.hostname;
  const names = fqdn === h.hostname ? h.hostname : `${fqdn} ${h.hostname}`;
  const lines = [
    '# Generated by Bronze networkd.',
    '127.0.0.1\tlocalhost',
    `${nodeAddress ?? '127.0.1.1'}\t${names}`,
    '::1\tlocalhost ip6-localhost ip6-loopback',
    'ff02::1\tip6-allnodes',
    'ff02::2\tip6-allrouters',
  ];
  for (const e of extra) lines.push(`${e.ip}\t${e.aliases.join(' ')}`);
  return `${lines.join('\n')}\n`;
}

export const RESOURCE_TYPES = {
  link: LINK_TYPE,
  address: ADDRESS_TYPE,
  route: ROUTE_TYPE,
  resolver: RESOLVER_TYPE,
  hostname: HOSTNAME_STATUS_TYPE,
  nodeAddress: NODE_ADDRESS_TYPE,
  timeServer: TIME_SERVER_TYPE,
} as const;
