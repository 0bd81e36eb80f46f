// The network settings (Talos: Machine().Network(), NetworkHostnameConfig(),
// NetworkResolverConfig(), NetworkStaticHostConfig(), the link documents), each resolved from
// v1alpha1 machine.network and the typed documents that replace parts of it: HostnameConfig,
// ResolverConfig, LinkConfig (static addresses and routes of a named link), DHCPv4Config (DHCP
// on a link, its route metric and ignoreRoutes), BondConfig and BridgeConfig (links to create,
// with their members), StaticHostConfig (/etc/hosts entries). Documents apply in stream order.
// Types only from the validator: networkd imports this.
import type { BondConfig, BridgeConfig } from '../kinds.ts';
import type { NetworkDevice, Route, Vlan } from '../schema.ts';
import type { TypedConfig } from './typed.ts';
import { timeServers } from './time.ts';

export interface RouteSettings {
  /** Destination prefix; a route without one is the default route of its gateway's family. */
  network: string;
  gateway?: string;
  source?: string;
  metric?: number;
  mtu?: number;
}

export type VlanSettings = Omit<Vlan, 'routes'> & { routes?: RouteSettings[] };

export type LinkSettings = Omit<NetworkDevice, 'routes' | 'vlans' | 'dhcpOptions'> & {
  routes?: RouteSettings[];
  vlans?: VlanSettings[];
  /** routeMetric: of DHCP-learned routes; ignoreRoutes: take the address, not the routes (DHCPv4Config). */
  dhcpOptions?: NetworkDevice['dhcpOptions'] & { ignoreRoutes?: boolean };
  /** The bond or bridge this link is a member of. */
  master?: string;
  /** A bond to create under this name: its document. */
  bond?: BondConfig;
  /** A bridge to create under this name: its document. */
  bridge?: BridgeConfig;
};

export interface NetworkSettings {
  hostname?: string;
  interfaces?: LinkSettings[];
  nameservers?: string[];
  searchDomains?: string[];
  extraHostEntries?: Array<{ ip: string; aliases: string[] }>;
  /** Time servers to publish when DHCP names none (time.ts). */
  timeServers?: string[];
}

type LinkRoute = NonNullable<BondConfig['routes']>[number];

/** The default route of the gateway's family, for a route without a destination. */
const defaultOf = (gateway: string | undefined) => (gateway?.includes(':') ? '::/0' : '0.0.0.0/0');

/** A typed document's route (a missing destination: the default route of the gateway's family). */
function routeOf(r: LinkRoute): RouteSettings {
  return { network: r.destination ?? defaultOf(r.gateway), ...(r.gateway ? { gateway: r.gateway } : {}), ...(r.metric ? { metric: r.metric } : {}) };
}

/** A v1alpha1 route (likewise, a route with a gateway alone is a default route). */
function v1RouteOf(r: Route): RouteSettings {
  return { ...r, network: r.network ?? defaultOf(r.gateway) };
}

function vlanOf(v: Vlan): VlanSettings {
  const { routes, ...rest } = v;
  return { ...rest, ...(routes ? { routes: routes.map(v1RouteOf) } : {}) };
}

function interfaceOf(d: NetworkDevice): LinkSettings {
  const { routes, vlans, dhcpOptions, ...rest } = structuredClone(d);
  return {
    ...rest,
    ...(routes ? { routes: routes.map(v1RouteOf) } : {}),
    ...(vlans ? { vlans: vlans.map(vlanOf) } : {}),
    ...(dhcpOptions ? { dhcpOptions } : {}),
  };
}

/** A bond or bridge as a link to create, with its addresses and routes. */
function virtualLinkOf(d: BondConfig | BridgeConfig): LinkSettings {
  return {
    interface: d.name,
    ...(d.kind === 'BondConfig' ? { bond: d } : { bridge: d }),
    ...(d.addresses ? { addresses: d.addresses.map((a) => a.address) } : {}),
    ...(d.routes ? { routes: d.routes.map(routeOf) } : {}),
    ...(d.mtu !== undefined ? { mtu: d.mtu } : {}),
  };
}

/** The hostname: machine.network.hostname, a HostnameConfig's over it. */
export function hostname(c: TypedConfig | undefined): string | undefined {
  let name = c?.v1alpha1?.machine.network?.hostname || undefined;
  for (const d of c?.documents ?? []) if (d.kind === 'HostnameConfig' && d.hostname !== undefined) name = d.hostname;
  return name;
}

/** The resolvers: machine.network's nameservers and searchDomains, a ResolverConfig's over each. */
export function resolvers(c: TypedConfig | undefined): { nameservers?: string[]; searchDomains?: string[] } {
  const net = c?.v1alpha1?.machine.network;
  let nameservers = net?.nameservers;
  let searchDomains = net?.searchDomains;
  for (const d of c?.documents ?? []) {
    if (d.kind !== 'ResolverConfig') continue;
    if (d.nameservers) nameservers = d.nameservers.map((n) => n.address);
    if (d.searchDomains?.domains) searchDomains = d.searchDomains.domains;
  }
  return { ...(nameservers ? { nameservers } : {}), ...(searchDomains ? { searchDomains } : {}) };
}

/** The /etc/hosts entries: machine.network.extraHostEntries, then each StaticHostConfig. */
export function staticHosts(c: TypedConfig | undefined): NetworkSettings['extraHostEntries'] {
  const v1 = c?.v1alpha1?.machine.network?.extraHostEntries;
  let entries = v1 ? [...v1] : undefined;
  for (const d of c?.documents ?? []) if (d.kind === 'StaticHostConfig') (entries ??= []).push({ ip: d.name, aliases: d.hostnames });
  return entries;
}

/**
 * The links: machine.network.interfaces, then the link documents in stream order (a bond or
 * bridge adds itself and marks its members; DHCPv4Config and LinkConfig configure the link of
 * their name, adding it when machine.network has none).
 */
export function links(c: TypedConfig | undefined): LinkSettings[] | undefined {
  const v1 = c?.v1alpha1?.machine.network?.interfaces;
  let interfaces = v1 ? v1.map(interfaceOf) : undefined;
  const linkNamed = (name: string): LinkSettings => {
    const list = (interfaces ??= []);
    let link = list.find((i) => i.interface === name);
    if (!link) list.push((link = { interface: name }));
    return link;
  };
  for (const d of c?.documents ?? []) {
    switch (d.kind) {
      case 'BondConfig':
      case 'BridgeConfig': {
        const list = (interfaces ??= []);
        list.push(virtualLinkOf(d));
        for (const member of d.links) {
          const existing = list.find((i) => i.interface === member);
          if (existing) existing.master = d.name;
          else list.push({ interface: member, master: d.name });
        }
        break;
      }
      case 'DHCPv4Config': {
        const link = linkNamed(d.name);
        link.dhcp = true;
        if (d.routeMetric !== undefined || d.ignoreRoutes === true) {
          link.dhcpOptions = { ...link.dhcpOptions, ...(d.routeMetric !== undefined ? { routeMetric: d.routeMetric } : {}), ...(d.ignoreRoutes === true ? { ignoreRoutes: true } : {}) };
        }
        break;
      }
      case 'LinkConfig': {
        const link = linkNamed(d.name);
        if (d.addresses) link.addresses = d.addresses.map((a) => a.address);
        if (d.routes) link.routes = d.routes.map(routeOf);
        if (d.mtu !== undefined) link.mtu = d.mtu;
        break;
      }
    }
  }
  return interfaces;
}

/** Every network setting at once (networkd's input); {} without a configuration. */
export function network(c: TypedConfig | undefined): NetworkSettings {
  if (!c) return {};
  const name = hostname(c);
  const interfaces = links(c);
  const hosts = staticHosts(c);
  const servers = timeServers(c);
  return {
    ...(name !== undefined ? { hostname: name } : {}),
    ...(interfaces ? { interfaces } : {}),
    ...resolvers(c),
    ...(hosts ? { extraHostEntries: hosts } : {}),
    ...(servers ? { timeServers: servers } : {}),
  };
}
