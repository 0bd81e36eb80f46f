// networkd's inputs: the NetworkConfig (the shape of v1alpha1 `machine.network`, so the
// machine configuration's section can be passed as it is) and the kernel arguments `ip=` and
// `bronze.network.interface.ignore=`, parsed by pure functions and merged into one config.
import { familyOf, netmaskToPrefix, parseCidr } from '../lib/ip.ts';
import type { VirtualLink } from './virtual-links.ts';

export interface RouteConfig {
  /** Destination prefix; '0.0.0.0/0', '::/0' or 'default' for a default route. */
  network: string;
  gateway?: string;
  /** Preferred source address. */
  source?: string;
  /** Default 1024. */
  metric?: number;
  mtu?: number;
}

export interface VlanConfig {
  vlanId: number;
  addresses?: string[];
  routes?: RouteConfig[];
  dhcp?: boolean;
  mtu?: number;
}

/** Picks links by what they are rather than by name (v1alpha1 `deviceSelector`). */
export interface DeviceSelector {
  /** MAC, '*' wildcards allowed ('00:11:*'). */
  hardwareAddr?: string;
  permanentAddr?: string;
  physical?: boolean;
  /** Not supported yet (need sysfs); reported as a problem. */
  busPath?: string;
  pciID?: string;
  driver?: string;
}

export interface InterfaceConfig {
  /** Link name, e.g. 'eth0'; or else a deviceSelector. */
  interface?: string;
  deviceSelector?: DeviceSelector | DeviceSelector[];
  /** CIDR, e.g. '192.168.1.10/24' or '2001:db8::10/64'. */
  addresses?: string[];
  routes?: RouteConfig[];
  /** Run the DHCPv4 client on this link. */
  dhcp?: boolean;
  /** routeMetric: of DHCP-learned routes; ignoreRoutes: take the address, not the routes (DHCPv4Config). */
  dhcpOptions?: { routeMetric?: number; ignoreRoutes?: boolean };
  mtu?: number;
  vlans?: VlanConfig[];
  /** Leave this link alone entirely. */
  ignore?: boolean;
  /** A bond or bridge networkd creates under this name (BondConfig, BridgeConfig). */
  virtual?: VirtualLink;
  /** The bond or bridge this link is a member of. */
  master?: string;
}

export interface ExtraHostEntry {
  ip: string;
  aliases: string[];
}

export interface NetworkConfig {
  hostname?: string;
  interfaces?: InterfaceConfig[];
  nameservers?: string[];
  searchDomains?: string[];
  extraHostEntries?: ExtraHostEntry[];
  /** Link names networkd never touches (also `bronze.network.interface.ignore=`). */
  ignore?: string[];
  /** Time servers to publish when neither DHCP nor `ip=` names any. */
  timeServers?: string[];
}

export function isValidHostname(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  return name.split('.').every((l) => /^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/.test(l));
}

/** VLAN link name for an interface: 'eth0.100'. */
export function vlanLinkName(parent: string, id: number): string {
  return `${parent}.${id}`;
}

// ---------------------------------------------------------------------------------------------
// Kernel arguments.

/** One `ip=` argument, as the kernel's nfsroot.rst describes it. */
export interface IpArg {
  clientIp?: string;
  serverIp?: string;
  gateway?: string;
  netmask?: string;
  hostname?: string;
  device?: string;
  /** 'off'/'none'/'static', 'on'/'any'/'dhcp'/'both'/'bootp'/'rarp' (normalized lowercase); undefined when empty. */
  autoconf?: string;
  dns: string[];
  ntp: string[];
}

export interface KernelNetworkArgs {
  ip: IpArg[];
  /** From every `bronze.network.interface.ignore=` (comma-separated values allowed). */
  ignore: string[];
  /** `bronze.hostname=`. */
  hostname?: string;
  /** Arguments that could not be used, with the reason. */
  errors: string[];
}

/** Splits the command line into words (double quotes group; repeated keys all kept). */
function words(cmdline: string): Array<[string, string | undefined]> {
  const out: Array<[string, string | undefined]> = [];
  for (const m of cmdline.matchAll(/([^\s=]+)(?:=("[^"]*"|\S*))?/g)) {
    let v = m[2];
    if (v !== undefined && v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1);
    out.push([m[1]!, v]);
  }
  return out;
}

/** Fields separated by ':', IPv6 addresses in brackets. */
function ipFields(v: string): string[] {
  const out: string[] = [];
  let cur = '';
  let bracket = false;
  for (const ch of v) {
    if (ch === '[') bracket = true;
    else if (ch === ']') bracket = false;
    else if (ch === ':' && !bracket) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

export function parseIpArg(value: string): IpArg {
  const short = value.toLowerCase();
  if (['off', 'none', 'on', 'any', 'dhcp', 'bootp', 'rarp', 'both'].includes(short)) return { autoconf: short, dns: [], ntp: [] };
  const f = ipFields(value);
  const get = (i: number) => (f[i] && f[i] !== '' ? f[i] : undefined);
  const addr = (i: number, what: string) => {
    const v = get(i);
    if (v === undefined) return undefined;
    familyOf(v); // throws on junk
    return v;
  };
  const out: IpArg = { dns: [], ntp: [] };
  const set = <K extends keyof IpArg>(k: K, v: IpArg[K] | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  set('clientIp', addr(0, 'client-ip'));
  set('serverIp', addr(1, 'server-ip'));
  set('gateway', addr(2, 'gw-ip'));
  const mask = get(3);
  if (mask !== undefined) {
    if (/^\d{1,3}$/.test(mask)) out.netmask = mask;
    else {
      netmaskToPrefix(mask); // throws on a bad mask
      out.netmask = mask;
    }
  }
  set('hostname', get(4));
  set('device', get(5));
  const auto = get(6)?.toLowerCase();
  set('autoconf', auto);
  for (const i of [7, 8]) {
    const d = addr(i, 'dns');
    if (d) out.dns.push(d);
  }
  const ntp = addr(9, 'ntp');
  if (ntp) out.ntp.push(ntp);
  return out;
}

export function parseKernelNetworkArgs(cmdline: string): KernelNetworkArgs {
  const out: KernelNetworkArgs = { ip: [], ignore: [], errors: [] };
  for (const [key, value] of words(cmdline)) {
    if (key === 'ip' && value !== undefined) {
      try {
        out.ip.push(parseIpArg(value));
      } catch (err) {
        out.errors.push(`ip=${value}: ${(err as Error).message}`);
      }
    } else if (key === 'bronze.network.interface.ignore' && value) {
      out.ignore.push(...value.split(',').filter(Boolean));
    } else if (key === 'bronze.hostname' && value) {
      out.hostname = value;
    }
  }
  return out;
}

const DHCP_AUTOCONF = new Set(['on', 'any', 'dhcp', 'both', 'bootp']);

/**
 * The NetworkConfig the kernel arguments ask for: `ip=` with a client address and a device
 * makes a static address (and a default route via its gateway), with autoconf dhcp a DHCP
 * link, plus nameservers, time servers and a hostname. `ip=dhcp` without a device keeps DHCP
 * on every physical link (defaultDhcp true); `ip=off`/`ip=none` turns that default off.
 */
export function kernelArgsToConfig(k: KernelNetworkArgs): { config: NetworkConfig; defaultDhcp?: boolean; errors: string[] } {
  const config: NetworkConfig = {};
  const errors = [...k.errors];
  let defaultDhcp: boolean | undefined;
  const interfaces = new Map<string, InterfaceConfig>();
  const itf = (name: string) => {
    let c = interfaces.get(name);
    if (!c) interfaces.set(name, (c = { interface: name }));
    return c;
  };
  const nameservers: string[] = [];
  const ntp: string[] = [];
  for (const a of k.ip) {
    nameservers.push(...a.dns);
    ntp.push(...a.ntp);
    if (a.hostname && !config.hostname) config.hostname = a.hostname;
    const dhcp = a.autoconf !== undefined && DHCP_AUTOCONF.has(a.autoconf);
    if (a.clientIp) {
      if (!a.device) {
        errors.push(`ip=${a.clientIp}:...: a static address needs a device`);
        continue;
      }
      let prefix: number;
      if (a.netmask === undefined) prefix = familyOf(a.clientIp) === 'inet4' ? 24 : 64;
      else prefix = /^\d+$/.test(a.netmask) ? Number(a.netmask) : netmaskToPrefix(a.netmask);
      const c = itf(a.device);
      (c.addresses ??= []).push(`${a.clientIp}/${prefix}`);
      if (a.gateway) (c.routes ??= []).push({ network: familyOf(a.gateway) === 'inet4' ? '0.0.0.0/0' : '::/0', gateway: a.gateway });
    } else if (dhcp) {
      if (a.device) itf(a.device).dhcp = true;
      else defaultDhcp = true;
    } else if ((a.autoconf === 'off' || a.autoconf === 'none') && !a.device) {
      defaultDhcp = false;
    } else if (a.device && a.gateway) {
      errors.push(`ip=::${a.gateway}:...:${a.device}: a gateway without an address is ignored`);
    }
  }
  if (interfaces.size > 0) config.interfaces = [...interfaces.values()];
  if (nameservers.length > 0) config.nameservers = nameservers;
  if (ntp.length > 0) config.timeServers = ntp;
  if (k.ignore.length > 0) config.ignore = [...k.ignore];
  if (k.hostname && !config.hostname) config.hostname = k.hostname;
  return defaultDhcp === undefined ? { config, errors } : { config, defaultDhcp, errors };
}

/**
 * The machine configuration over the kernel arguments: its interfaces replace those of the
 * same name, its lists replace theirs when given; ignore lists add up.
 */
export function mergeConfigs(base: NetworkConfig, over: NetworkConfig): NetworkConfig {
  const out: NetworkConfig = { ...base, ...stripUndefined(over) };
  const byName = new Map<string, InterfaceConfig>();
  const key = (i: InterfaceConfig, n: number) => i.interface ?? `selector ${n} ${JSON.stringify(i.deviceSelector)}`;
  (base.interfaces ?? []).forEach((i, n) => byName.set(key(i, n), i));
  (over.interfaces ?? []).forEach((i, n) => byName.set(key(i, n), i));
  if (byName.size > 0) out.interfaces = [...byName.values()];
  const ignore = [...new Set([...(base.ignore ?? []), ...(over.ignore ?? [])])];
  if (ignore.length > 0) out.ignore = ignore;
  return out;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
