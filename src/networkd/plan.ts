// What networkd wants each link to be, from the configuration and the links the kernel has:
// a pure function, so the rules (ignore lists, device selectors, VLANs, default DHCP on every
// physical link without configuration, loopback up) are tested without a kernel.
import { type DeviceSelector, type InterfaceConfig, type NetworkConfig, type RouteConfig, vlanLinkName } from './config.ts';
import type { Link } from './netlink.ts';
import type { VirtualLink } from './virtual-links.ts';
import { isPhysical } from './resources.ts';

export interface LinkPlan {
  name: string;
  up: boolean;
  mtu?: number;
  /** CIDR. */
  addresses: string[];
  routes: RouteConfig[];
  dhcp: boolean;
  /** Metric of DHCP-learned routes (default 1024). */
  routeMetric: number;
  /** Leave out the routes a DHCP lease brings (the connected route of its address stays). */
  ignoreDhcpRoutes?: boolean;
  /** For a VLAN networkd creates. */
  vlan?: { parent: string; id: number };
  /** For a bond or bridge networkd creates. */
  virtual?: VirtualLink;
  /** The bond or bridge to enslave this link to. */
  master?: string;
  /** Why: 'config', 'default-dhcp', 'loopback'. */
  source: string;
}

export interface NetworkPlan {
  plans: LinkPlan[];
  ignored: string[];
  /** Configuration that matched nothing or cannot be honoured, by interface (or selector). */
  problems: Array<{ link: string; message: string }>;
}

export const DEFAULT_ROUTE_METRIC = 1024;

function globMatch(pattern: string, value: string): boolean {
  const re = new RegExp(`^${pattern.toLowerCase().replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
  return re.test(value.toLowerCase());
}

/** Links a selector picks; unsupported fields (needing sysfs: busPath, pciID, driver) are errors. */
export function selectLinks(sel: DeviceSelector, links: Link[]): Link[] {
  const unsupported = (['busPath', 'pciID', 'driver'] as const).filter((k) => sel[k] !== undefined);
  if (unsupported.length > 0) throw new Error(`deviceSelector ${unsupported.join(', ')} is not supported yet`);
  return links.filter(
    (l) =>
      !l.loopback &&
      (sel.hardwareAddr === undefined || globMatch(sel.hardwareAddr, l.mac)) &&
      (sel.permanentAddr === undefined || globMatch(sel.permanentAddr, l.permanentMac ?? l.mac)) &&
      (sel.physical === undefined || isPhysical(l) === sel.physical),
  );
}

export function planNetwork(links: Link[], config: NetworkConfig, defaultDhcp = true): NetworkPlan {
  const problems: NetworkPlan['problems'] = [];
  const ignored = new Set(config.ignore ?? []);
  const byName = new Map(links.map((l) => [l.name, l]));
  const plans = new Map<string, LinkPlan>();

  const resolved: Array<{ name: string; itf: InterfaceConfig }> = [];
  for (const [i, itf] of (config.interfaces ?? []).entries()) {
    if (itf.interface) {
      resolved.push({ name: itf.interface, itf });
      continue;
    }
    if (!itf.deviceSelector) {
      problems.push({ link: `interfaces[${i}]`, message: 'neither interface nor deviceSelector' });
      continue;
    }
    const sels = Array.isArray(itf.deviceSelector) ? itf.deviceSelector : [itf.deviceSelector];
    try {
      const matched = new Set<string>();
      for (const s of sels) for (const l of selectLinks(s, links)) matched.add(l.name);
      // Talos: a selector configures the first matching link.
      const first = [...matched].sort((a, b) => byName.get(a)!.index - byName.get(b)!.index)[0];
      if (first) resolved.push({ name: first, itf });
      else problems.push({ link: `interfaces[${i}]`, message: 'deviceSelector matches no link (yet)' });
    } catch (err) {
      problems.push({ link: `interfaces[${i}]`, message: (err as Error).message });
    }
  }

  for (const { name, itf } of resolved) {
    if (itf.ignore) {
      ignored.add(name);
      continue;
    }
    if (ignored.has(name)) continue;
    const metric = itf.dhcpOptions?.routeMetric ?? DEFAULT_ROUTE_METRIC;
    plans.set(name, {
      name,
      up: true,
      ...(itf.mtu !== undefined ? { mtu: itf.mtu } : {}),
      addresses: [...(itf.addresses ?? [])],
      routes: [...(itf.routes ?? [])],
      dhcp: itf.dhcp ?? false,
      routeMetric: metric,
      ...(itf.dhcpOptions?.ignoreRoutes ? { ignoreDhcpRoutes: true } : {}),
      ...(itf.virtual ? { virtual: itf.virtual } : {}),
      ...(itf.master ? { master: itf.master } : {}),
      source: 'config',
    });
    for (const v of itf.vlans ?? []) {
      const vname = vlanLinkName(name, v.vlanId);
      if (ignored.has(vname)) continue;
      plans.set(vname, {
        name: vname,
        up: true,
        ...(v.mtu !== undefined ? { mtu: v.mtu } : {}),
        addresses: [...(v.addresses ?? [])],
        routes: [...(v.routes ?? [])],
        dhcp: v.dhcp ?? false,
        routeMetric: metric,
        vlan: { parent: name, id: v.vlanId },
        source: 'config',
      });
    }
  }

  for (const l of links) {
    if (ignored.has(l.name) || plans.has(l.name)) continue;
    if (l.loopback) plans.set(l.name, { name: l.name, up: true, addresses: [], routes: [], dhcp: false, routeMetric: DEFAULT_ROUTE_METRIC, source: 'loopback' });
    else if (defaultDhcp && isPhysical(l)) {
      plans.set(l.name, { name: l.name, up: true, addresses: [], routes: [], dhcp: true, routeMetric: DEFAULT_ROUTE_METRIC, source: 'default-dhcp' });
    }
  }
  return { plans: [...plans.values()], ignored: [...ignored].sort(), problems };
}
