// What networkd publishes, computed from what it observes: pure functions from the kernel's
// links, addresses and routes (and the DHCP leases and configuration) to resource specs, and
// the text of /etc/resolv.conf and /etc/hosts. The manager publishes their output. The specs are
// the contract's (src/contract/resources/), in Talos's YAML form: values named as Talos names them.
import { type AddressStatusSpec, ADDRESS_STATUS_TYPE } from '../contract/resources/address-status.ts';
import { type HostnameStatusSpec, HOSTNAME_STATUS_TYPE } from '../contract/resources/hostname-status.ts';
import { type LinkStatusSpec, LINK_STATUS_TYPE } from '../contract/resources/link-status.ts';
import { ADDRESS_FLAGS, LINK_FLAGS, LINK_TYPE, ROUTE_FLAGS, ROUTE_PROTOCOL, ROUTE_TYPE, ROUTING_TABLE, SCOPE } from '../contract/resources/net.ts';
import { type NodeAddressSpec, NODE_ADDRESS_TYPE } from '../contract/resources/node-address.ts';
import { type ResolverStatusSpec, RESOLVER_STATUS_TYPE } from '../contract/resources/resolver-status.ts';
import { type RouteStatusSpec, ROUTE_STATUS_TYPE } from '../contract/resources/route-status.ts';
import { type TimeServerStatusSpec, TIME_SERVER_STATUS_TYPE } from '../contract/resources/time-server-status.ts';
import { isLinkLocal, isLoopback } from '../lib/ip.ts';
import { ARPHRD_ETHER, type Address, IFA_F, type Link, RT_TABLE, type Route } from './netlink.ts';


/** What sysfs says of a link that rtnetlink does not (see linkinfo.ts); each part only when known. */
export interface LinkSysInfo {
  driver?: string;
  speedMbit?: number;
  /** 'Full', 'Half' or 'Unknown', as Talos names ethtool's duplex. */
  duplex?: string;
}

/** Plain hardware: an Ethernet link that no driver kind (veth, vlan, bridge, ...) made. */
export function isPhysical(l: Link): boolean {
  return l.type === ARPHRD_ETHER && !l.loopback && l.kind === undefined;
}

/** VLAN protocol as Talos names it: '802.1q', '802.1ad', or the number. */
function vlanProtocol(p: string): string {
  return p.startsWith('0x') ? String(parseInt(p, 16)) : p.toLowerCase();
}

export function linkStatusSpec(l: Link, sys: LinkSysInfo = {}): LinkStatusSpec {
  const spec: LinkStatusSpec = {
    index: l.index,
    type: LINK_TYPE.name(l.type),
    linkIndex: l.parent ?? 0,
    flags: LINK_FLAGS.text(l.flags),
    hardwareAddr: l.mac,
    permanentAddr: l.permanentMac ?? '',
    broadcastAddr: l.broadcast,
    mtu: l.mtu,
    queueDisc: l.qdisc ?? '',
    operationalState: l.operState,
    kind: l.kind ?? '',
    slaveKind: l.slaveKind ?? '',
    linkState: l.lowerUp,
  };
  if (l.alias) spec.alias = l.alias;
  if (l.altNames?.length) spec.altNames = [...l.altNames];
  if (l.master) spec.masterIndex = l.master;
  if (sys.driver) spec.driver = sys.driver;
  if (sys.speedMbit !== undefined) spec.speedMbit = sys.speedMbit;
  if (sys.duplex !== undefined) spec.duplex = sys.duplex;
  if (l.vlan) spec.vlan = { vlanID: l.vlan.id, vlanProtocol: vlanProtocol(l.vlan.protocol) };
  return spec;
}

export function addressId(a: Address, linkName: string): string {
  return `${linkName}/${a.address}/${a.prefixLength}`;
}

export function addressStatusSpec(a: Address, linkName: string): AddressStatusSpec {
  const spec: AddressStatusSpec = {
    address: `${a.address}/${a.prefixLength}`,
    linkIndex: a.index,
    linkName,
    family: a.family,
    scope: SCOPE.name(a.scope),
    flags: ADDRESS_FLAGS.text(a.flags),
    priority: a.priority ?? 0,
  };
  if (a.local) spec.local = a.local;
  if (a.broadcast) spec.broadcast = a.broadcast;
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
  return ROUTING_TABLE.name(t);
}

export function routeStatusSpec(r: Route, linkName: string): RouteStatusSpec {
  const spec: RouteStatusSpec = {
    family: r.family,
    dst: isDefaultDst(r.dst) ? '' : r.dst,
    src: r.prefsrc ?? '',
    gateway: r.gateway ?? '',
    table: tableName(r.table),
    priority: r.priority,
    scope: SCOPE.name(r.scope),
    type: ROUTE_TYPE.name(r.type),
    flags: ROUTE_FLAGS.text(r.flags),
    protocol: ROUTE_PROTOCOL.name(r.protocol),
  };
  if (r.oif) spec.outLinkIndex = r.oif;
  if (linkName) spec.outLinkName = linkName;
  if (r.mtu) spec.mtu = r.mtu;
  return spec;
}

/** The routes worth showing: every table but the kernel's local one, no multicast/cache. */
export function publishedRoute(r: Route): boolean {
  return r.table !== RT_TABLE.LOCAL && ROUTE_TYPE.name(r.type) !== 'multicast';
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

export function renderResolvConf(r: ResolverStatusSpec): string {
  const lines = ['# Generated by Bronze networkd.'];
  for (const ns of r.dnsServers.slice(0, MAXNS)) lines.push(`nameserver ${ns}`);
  if (r.searchDomains.length > 0) lines.push(`search ${r.searchDomains.join(' ')}`);
  return `${lines.join('\n')}\n`;
}

export function renderHosts(h: HostnameStatusSpec, nodeAddress: string | undefined, extra: Array<{ ip: string; aliases: string[] }> = []): string {
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
  link: LINK_STATUS_TYPE,
  address: ADDRESS_STATUS_TYPE,
  route: ROUTE_STATUS_TYPE,
  resolver: RESOLVER_STATUS_TYPE,
  hostname: HOSTNAME_STATUS_TYPE,
  nodeAddress: NODE_ADDRESS_TYPE,
  timeServer: TIME_SERVER_STATUS_TYPE,
} as const;
