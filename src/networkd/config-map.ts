// networkd's input from the machine configuration: machine.network, with the typed documents
// that replace parts of it (HostnameConfig, ResolverConfig, LinkConfig as static addresses and
// routes of a named link, DHCPv4Config turning DHCP on for a link with its route metric and
// ignoreRoutes, BondConfig and BridgeConfig as links networkd creates with their members,
// StaticHostConfig as /etc/hosts entries), and the time servers
// (published for timed when DHCP gives none). The input is the validator's typed configuration.
import type { NetworkDevice, Route, Vlan } from '../config/schema.ts';
import type { BondConfig, BridgeConfig } from '../config/kinds.ts';
import type { MachineConfigView } from '../daemon/config-watch.ts';
import type { InterfaceConfig, NetworkConfig, RouteConfig, VlanConfig } from './config.ts';
import { bondOptions, bridgeOptions } from './virtual-links.ts';

type LinkRoute = NonNullable<BondConfig['routes']>[number];

/** The default route of the gateway's family, for a route without a destination. */
const defaultOf = (gateway: string | undefined) => (gateway?.includes(':') ? '::/0' : '0.0.0.0/0');

/** A typed document's route as networkd's (a missing destination: the default route of the gateway's family). */
function routeOf(r: LinkRoute): RouteConfig {
  return { network: r.destination ?? defaultOf(r.gateway), ...(r.gateway ? { gateway: r.gateway } : {}), ...(r.metric ? { metric: r.metric } : {}) };
}

/** A v1alpha1 route as networkd's (likewise, a route with a gateway alone is a default route). */
function v1RouteOf(r: Route): RouteConfig {
  return { ...r, network: r.network ?? defaultOf(r.gateway) };
}

function vlanOf(v: Vlan): VlanConfig {
  const { routes, ...rest } = v;
  return { ...rest, ...(routes ? { routes: routes.map(v1RouteOf) } : {}) };
}

/** A v1alpha1 interface as networkd's. */
function interfaceOf(d: NetworkDevice): InterfaceConfig {
  const { routes, vlans, dhcpOptions, ...rest } = structuredClone(d);
  return {
    ...rest,
    ...(routes ? { routes: routes.map(v1RouteOf) } : {}),
    ...(vlans ? { vlans: vlans.map(vlanOf) } : {}),
    ...(dhcpOptions ? { dhcpOptions } : {}),
  };
}

/** A bond or bridge as a link networkd creates, with its addresses and routes. */
function virtualLinkOf(d: BondConfig | BridgeConfig): InterfaceConfig {
  const options = d.kind === 'BondConfig' ? bondOptions(d) : bridgeOptions(d);
  return {
    interface: d.name,
    virtual: { kind: d.kind === 'BondConfig' ? 'bond' : 'bridge', options, ...(d.hardwareAddr ? { mac: d.hardwareAddr } : {}) },
    ...(d.addresses ? { addresses: d.addresses.map((a) => a.address) } : {}),
    ...(d.routes ? { routes: d.routes.map(routeOf) } : {}),
    ...(d.mtu !== undefined ? { mtu: d.mtu } : {}),
  };
}

export function networkConfigOf(spec: MachineConfigView | undefined): NetworkConfig {
  if (!spec) return {};
  const net = spec.v1alpha1?.machine.network ?? {};
  const cfg: NetworkConfig = {
    ...(net.hostname ? { hostname: net.hostname } : {}),
    ...(net.interfaces ? { interfaces: net.interfaces.map(interfaceOf) } : {}),
    ...(net.nameservers ? { nameservers: net.nameservers } : {}),
    ...(net.searchDomains ? { searchDomains: net.searchDomains } : {}),
    ...(net.extraHostEntries ? { extraHostEntries: net.extraHostEntries } : {}),
  };
  const servers = spec.v1alpha1?.machine.time?.servers;
  if (servers?.length) cfg.timeServers = servers;
  const linkNamed = (name: string): InterfaceConfig => {
    const interfaces = (cfg.interfaces ??= []);
    let link = interfaces.find((i) => i.interface === name);
    if (!link) interfaces.push((link = { interface: name }));
    return link;
  };
  for (const d of spec.documents) {
    switch (d.kind) {
      case 'HostnameConfig':
        if (d.hostname !== undefined) cfg.hostname = d.hostname;
        break;
      case 'ResolverConfig':
        if (d.nameservers) cfg.nameservers = d.nameservers.map((n) => n.address);
        if (d.searchDomains?.domains) cfg.searchDomains = d.searchDomains.domains;
        break;
      case 'TimeSyncConfig':
        if (d.ntp?.servers) cfg.timeServers = d.ntp.servers;
        break;
      case 'StaticHostConfig':
        (cfg.extraHostEntries ??= []).push({ ip: d.name, aliases: d.hostnames });
        break;
      case 'BondConfig':
      case 'BridgeConfig': {
        const interfaces = (cfg.interfaces ??= []);
        interfaces.push(virtualLinkOf(d));
        for (const member of d.links) {
          const existing = interfaces.find((i) => i.interface === member);
          if (existing) existing.master = d.name;
          else interfaces.push({ interface: member, master: d.name });
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
  return cfg;
}
