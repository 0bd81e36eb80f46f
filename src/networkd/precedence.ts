// Where each of networkd's settings comes from, as pure functions: the configuration (the
// kernel arguments merged under the machine config) first, then the DHCP leases (in the order
// of the links' plans), then the defaults. Talos applies the same order (network operator
// precedence: configuration over DHCP over defaults).
import { networkOf } from '../lib/ip.ts';
import { type KernelNetworkArgs, type NetworkConfig, kernelArgsToConfig, mergeConfigs } from './config.ts';
import type { Lease } from './dhcp/client.ts';
import { RT_SCOPE } from './netlink.ts';
import type { HostnameStatusSpec } from '../contract/resources/hostname-status.ts';
import type { ResolverStatusSpec } from '../contract/resources/resolver-status.ts';

/** What networkd applies: the kernel arguments under the configuration, and whether unconfigured links get DHCP. */
export function effectiveConfig(kernel: KernelNetworkArgs, config: NetworkConfig): { config: NetworkConfig; defaultDhcp: boolean; errors: string[] } {
  const k = kernelArgsToConfig(kernel);
  return { config: mergeConfigs(k.config, config), defaultDhcp: k.defaultDhcp ?? true, errors: k.errors };
}

/** The defaults used when neither configuration nor DHCP gives a value. */
export interface SettingDefaults {
  hostname: string;
  nameservers: readonly string[];
  timeServers: readonly string[];
}

const splitFqdn = (fqdn: string) => {
  const [host, ...rest] = fqdn.split('.');
  return { hostname: host!, domainname: rest.join('.') };
};

export function hostnameOf(cfg: NetworkConfig, leases: readonly Lease[], defaults: Pick<SettingDefaults, 'hostname'>): HostnameStatusSpec {
  if (cfg.hostname) return splitFqdn(cfg.hostname);
  for (const l of leases) {
    if (l.options.hostname) {
      const h = splitFqdn(l.options.hostname);
      return { hostname: h.hostname, domainname: h.domainname || (l.options.domainName ?? '') };
    }
  }
  const domain = leases.find((l) => l.options.domainName)?.options.domainName ?? '';
  return { hostname: defaults.hostname, domainname: domain };
}

export function resolversOf(cfg: NetworkConfig, leases: readonly Lease[], defaults: SettingDefaults): ResolverStatusSpec {
  const fromDhcp = [...new Set(leases.flatMap((l) => l.options.dnsServers))];
  const dnsServers = cfg.nameservers?.length ? [...cfg.nameservers] : fromDhcp.length ? fromDhcp : [...defaults.nameservers];
  let searchDomains: string[];
  if (cfg.searchDomains?.length) searchDomains = [...cfg.searchDomains];
  else {
    const fromLeases = leases.flatMap((l) => (l.options.searchDomains.length ? l.options.searchDomains : l.options.domainName ? [l.options.domainName] : []));
    const domain = hostnameOf(cfg, leases, defaults).domainname;
    searchDomains = [...new Set(fromLeases.length ? fromLeases : domain ? [domain] : [])];
  }
  return { dnsServers, searchDomains };
}

export function timeServersOf(cfg: NetworkConfig, leases: readonly Lease[], defaults: Pick<SettingDefaults, 'timeServers'>): string[] {
  if (cfg.timeServers?.length) return [...cfg.timeServers];
  const fromDhcp = [...new Set(leases.flatMap((l) => l.options.ntpServers))];
  return fromDhcp.length ? fromDhcp : [...defaults.timeServers];
}

/** The routes a DHCPv4 lease asks for (RFC 3442 classless routes, else the first router). */
export function leaseRoutes(lease: Lease): Array<{ dst: string; gateway?: string; scope?: number }> {
  const o = lease.options;
  const onLink = (gw: string) => lease.prefixLength === 0 || networkOf({ address: gw, prefixLength: lease.prefixLength }) === networkOf({ address: lease.address, prefixLength: lease.prefixLength });
  const out: Array<{ dst: string; gateway?: string; scope?: number }> = [];
  const via = (dst: string, gw: string) => {
    // A router outside the leased prefix (e.g. a /32 lease) needs a host route first.
    if (!onLink(gw) && !out.some((r) => r.dst === `${gw}/32`)) out.push({ dst: `${gw}/32`, scope: RT_SCOPE.LINK });
    out.push({ dst, gateway: gw });
  };
  if (o.classlessRoutes.length > 0) {
    // RFC 3442: with classless routes the router option is ignored.
    for (const r of o.classlessRoutes) {
      if (r.router === '0.0.0.0') out.push({ dst: r.destination, scope: RT_SCOPE.LINK });
      else via(r.destination, r.router);
    }
  } else if (o.routers[0]) {
    via('0.0.0.0/0', o.routers[0]);
  }
  return out;
}
