// networkd's input from the machine configuration: machine.network, with the typed documents
// that replace parts of it (HostnameConfig, ResolverConfig, LinkConfig as static addresses and
// routes of a named link, DHCPv4Config turning DHCP on for a link with its route metric and
// ignoreRoutes, BondConfig and BridgeConfig as links networkd creates with their members,
// StaticHostConfig as /etc/hosts entries), and the time servers
// (published for timed when DHCP gives none).
import type { MachineConfigView } from '../daemon/config-watch.ts';
import type { InterfaceConfig, NetworkConfig, RouteConfig } from './config.ts';
import { bondOptions, bridgeOptions } from './virtual-links.ts';

/** A typed document's route as networkd's (a missing destination: the default route of the gateway's family). */
function routeOf(r: { destination?: string; gateway?: string; metric?: number }): RouteConfig {
  const dflt = r.gateway?.includes(':') ? '::/0' : '0.0.0.0/0';
  return { network: r.destination ?? dflt, ...(r.gateway ? { gateway: r.gateway } : {}), ...(r.metric ? { metric: r.metric } : {}) };
}

export function networkConfigOf(spec: MachineConfigView | undefined): NetworkConfig {
  if (!spec) return {};
  const net = (spec.v1alpha1.machine?.network ?? {}) as NetworkConfig & Record<string, unknown>;
  const cfg: NetworkConfig = {
    ...(net.hostname ? { hostname: net.hostname } : {}),
    ...(net.interfaces ? { interfaces: structuredClone(net.interfaces) } : {}),
    ...(net.nameservers ? { nameservers: net.nameservers } : {}),
    ...(net.searchDomains ? { searchDomains: net.searchDomains } : {}),
    ...(net.extraHostEntries ? { extraHostEntries: net.extraHostEntries } : {}),
  };
  const servers = spec.v1alpha1.machine?.time?.servers as string[] | undefined;
  if (servers?.length) cfg.timeServers = servers;
  for (const d of spec.documents) {
    if (d.kind === 'HostnameConfig' && typeof d.hostname === 'string') cfg.hostname = d.hostname;
    if (d.kind === 'ResolverConfig') {
      if (Array.isArray(d.nameservers)) cfg.nameservers = d.nameservers.map((n: { address: string }) => n.address);
      if (Array.isArray(d.searchDomains?.domains)) cfg.searchDomains = d.searchDomains.domains;
    }
    if (d.kind === 'TimeSyncConfig' && Array.isArray(d.ntp?.servers)) cfg.timeServers = d.ntp.servers;
    if (d.kind === 'StaticHostConfig' && typeof d.name === 'string' && Array.isArray(d.hostnames)) {
      (cfg.extraHostEntries ??= []).push({ ip: d.name, aliases: d.hostnames });
    }
    if (d.kind === 'BondConfig' || d.kind === 'BridgeConfig') {
      const interfaces = (cfg.interfaces ??= []);
      const options = d.kind === 'BondConfig' ? bondOptions(d) : bridgeOptions(d);
      interfaces.push({
        interface: d.name,
        virtual: { kind: d.kind === 'BondConfig' ? 'bond' : 'bridge', options, ...(d.hardwareAddr ? { mac: d.hardwareAddr } : {}) },
        ...(Array.isArray(d.addresses) ? { addresses: d.addresses.map((a: { address: string }) => a.address) } : {}),
        ...(Array.isArray(d.routes) ? { routes: d.routes.map(routeOf) } : {}),
        ...(typeof d.mtu === 'number' ? { mtu: d.mtu } : {}),
      });
      for (const member of (d.links ?? []) as string[]) {
        const existing = interfaces.find((i) => i.interface === member);
        if (existing) existing.master = d.name;
        else interfaces.push({ interface: member, master: d.name });
      }
    }
    if (d.kind === 'LinkConfig' || d.kind === 'DHCPv4Config') {
      const interfaces = (cfg.interfaces ??= []);
      let link = interfaces.find((i) => i.interface === d.name);
      if (!link) interfaces.push((link = { interface: d.name } as InterfaceConfig));
      if (d.kind === 'DHCPv4Config') {
        link.dhcp = true;
        if (typeof d.routeMetric === 'number' || d.ignoreRoutes === true) {
          link.dhcpOptions = { ...link.dhcpOptions, ...(typeof d.routeMetric === 'number' ? { routeMetric: d.routeMetric } : {}), ...(d.ignoreRoutes === true ? { ignoreRoutes: true } : {}) };
        }
      }
      else {
        if (Array.isArray(d.addresses)) link.addresses = d.addresses.map((a: { address: string }) => a.address);
        if (Array.isArray(d.routes)) link.routes = d.routes.map(routeOf);
        if (typeof d.mtu === 'number') link.mtu = d.mtu;
      }
    }
  }
  return cfg;
}
