// Typed network documents Bronze implements (networkd applies them): HostnameConfig,
// ResolverConfig, TimeSyncConfig (timed), LinkConfig, DHCPv4Config, BondConfig, BridgeConfig and
// StaticHostConfig. Field
// names and meanings are Talos's; the Talos fields Bronze does not implement are in policy.ts.
import { z } from '../lib/zod.ts';
import {
  asArray,
  asObject,
  bool,
  checkRouteFamilies,
  cidrAddress,
  dnsName,
  goDuration,
  hostname,
  interfaceName,
  intIn,
  ipAddress,
  mtu,
  network,
  routeAddress,
  timeServer,
  uint32,
  type Obj,
  type Reporter,
} from './fields.ts';
import type { KindSpec } from './kind-spec.ts';

/** Talos's bond options, as the kernel's bonding driver names them. */
export const BOND_MODES = ['balance-rr', 'active-backup', 'balance-xor', 'broadcast', '802.3ad', 'balance-tlb', 'balance-alb'] as const;
export const BOND_XMIT_HASH_POLICIES = ['layer2', 'layer3+4', 'layer2+3', 'encap2+3', 'encap3+4'] as const;

const linkMembers = () => z.array(interfaceName()).min(1);
const macAddress = () =>
  z.string().superRefine((s, ctx) => {
    if (!/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i.test(s)) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(s)} is not a valid hardware address: expected six colon-separated hex bytes, e.g. 2e:3c:4d:5e:6f:70` });
  });

/**
 * The kinds' zod schemas, built on first use (networkKindSchemas()), not when the module loads:
 * building them is most of what zod costs a process that loads the configuration's modules but
 * validates nothing yet (machined in maintenance mode, or before a configuration is read).
 */
function build() {
  const apiVersion = z.literal('v1alpha1');

  const hostnameConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('HostnameConfig'),
    /** `stable`: a name derived from the machine's identity; `off`: wait for DHCP or another source. */
    auto: z.enum(['stable', 'off']).optional(),
    hostname: hostname().optional(),
  });

  const resolverConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('ResolverConfig'),
    nameservers: z.array(z.strictObject({ address: ipAddress() })).optional(),
    searchDomains: z
      .strictObject({
        domains: z.array(dnsName('search domain')).optional(),
        disableDefault: bool().optional(),
      })
      .optional(),
  });

  const timeSyncConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('TimeSyncConfig'),
    enabled: bool().optional(),
    bootTimeout: goDuration().optional(),
    ntp: z.strictObject({ servers: z.array(timeServer()).optional() }).optional(),
  });

  const linkAddressSchema = z.strictObject({
    address: cidrAddress(),
    routePriority: uint32('route priority').optional(),
  });

  const linkRouteSchema = z.strictObject({
    destination: network().optional(),
    gateway: routeAddress('gateway').optional(),
    source: routeAddress('source address').optional(),
    metric: uint32('route metric').optional(),
    mtu: mtu().optional(),
  });

  const linkConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('LinkConfig'),
    name: interfaceName(),
    up: bool().optional(),
    mtu: mtu().optional(),
    addresses: z.array(linkAddressSchema).optional(),
    routes: z.array(linkRouteSchema).optional(),
    multicast: bool().optional(),
  });

  const dhcpv4ConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('DHCPv4Config'),
    name: interfaceName(),
    routeMetric: uint32('route metric').optional(),
    ignoreHostname: bool().optional(),
    ignoreRoutes: bool().optional(),
    clientIdentifier: z.enum(['none', 'mac', 'duid']).optional(),
    duidRaw: z
      .string()
      .superRefine((s, ctx) => {
        if (!/^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2})+$/.test(s)) {
          ctx.addIssue({ code: 'custom', message: `${JSON.stringify(s)} is not a valid DUID: expected colon-separated hex bytes, e.g. 00:01:00:01:23:45:67:89` });
        }
      })
      .optional(),
  });

  const staticHostConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('StaticHostConfig'),
    /** The IP address the host names map to. */
    name: ipAddress(),
    hostnames: z.array(dnsName('host name')).min(1),
  });

  /** What a bond, a bridge and a LinkConfig share: the link itself, its addresses and routes. */
  const linkFields = {
    name: interfaceName(),
    hardwareAddr: macAddress().optional(),
    links: linkMembers(),
    up: bool().optional(),
    mtu: mtu().optional(),
    addresses: z.array(linkAddressSchema).optional(),
    routes: z.array(linkRouteSchema).optional(),
    multicast: bool().optional(),
  };

  const bondConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('BondConfig'),
    ...linkFields,
    bondMode: z.enum(BOND_MODES),
    miimon: uint32('miimon').optional(),
    updelay: uint32('updelay').optional(),
    downdelay: uint32('downdelay').optional(),
    useCarrier: bool().optional(),
    xmitHashPolicy: z.enum(BOND_XMIT_HASH_POLICIES).optional(),
    arpInterval: uint32('arpInterval').optional(),
    arpValidate: z.enum(['none', 'active', 'backup', 'all', 'filter', 'filter-active', 'filter-backup']).optional(),
    arpAllTargets: z.enum(['any', 'all']).optional(),
    lacpRate: z.enum(['slow', 'fast']).optional(),
    failOverMac: z.enum(['none', 'active', 'follow']).optional(),
    adSelect: z.enum(['stable', 'bandwidth', 'count']).optional(),
    adActorSysPrio: intIn(0, 65535, 'adActorSysPrio').optional(),
    adUserPortKey: intIn(0, 1023, 'adUserPortKey').optional(),
    adLACPActive: z.enum(['on', 'off']).optional(),
    primaryReselect: z.enum(['always', 'better', 'failure']).optional(),
    resendIGMP: uint32('resendIGMP').optional(),
    minLinks: uint32('minLinks').optional(),
    lpInterval: uint32('lpInterval').optional(),
    packetsPerSlave: uint32('packetsPerSlave').optional(),
    numPeerNotif: intIn(0, 255, 'numPeerNotif').optional(),
    tlbLogicalLb: intIn(0, 1, 'tlbLogicalLb').optional(),
    allSlavesActive: intIn(0, 1, 'allSlavesActive').optional(),
    peerNotifDelay: uint32('peerNotifDelay').optional(),
    missedMax: intIn(0, 255, 'missedMax').optional(),
  });

  const bridgeConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('BridgeConfig'),
    ...linkFields,
    stp: z.strictObject({ enabled: bool().optional() }).optional(),
    vlan: z.strictObject({ filtering: bool().optional() }).optional(),
  });
  return { hostnameConfigSchema, resolverConfigSchema, timeSyncConfigSchema, linkAddressSchema, linkRouteSchema, linkConfigSchema, dhcpv4ConfigSchema, staticHostConfigSchema, bondConfigSchema, bridgeConfigSchema };
}

let built: ReturnType<typeof build> | undefined;

/** The schemas of the network kinds, built once, when first asked for. */
export function networkKindSchemas(): ReturnType<typeof build> {
  return (built ??= build());
}

/** A link may be a member of one bond or bridge, and not be configured as one itself. */
function checkMembers(doc: Obj, report: Reporter): void {
  const seen = new Set<string>();
  asArray(doc.links).forEach((l, i) => {
    if (typeof l !== 'string') return;
    if (l === doc.name) report(['links', i], `${JSON.stringify(l)} is the link being created: it cannot be its own member`);
    else if (seen.has(l)) report(['links', i], `${JSON.stringify(l)} is listed twice`);
    seen.add(l);
  });
  asArray(doc.routes).forEach((r, i) => {
    const route = asObject(r);
    if (route) checkRouteFamilies(route.destination, route.gateway, report, ['routes', i, 'gateway'], 'destination');
  });
}

const nonEmptyList = (v: unknown) => Array.isArray(v) && v.length > 0;
const present = (v: unknown) => v !== undefined;
const isTrue = (v: unknown) => v === true;

export const NETWORK_KINDS: readonly KindSpec[] = [
  {
    kind: 'HostnameConfig',
    get schema() {
      return networkKindSchemas().hostnameConfigSchema;
    },
    named: false,
    example: { auto: 'stable' },
    check(doc, report) {
      const hasName = typeof doc.hostname === 'string' && doc.hostname !== '';
      if (doc.auto === undefined && !hasName) report([], 'either "hostname" or "auto" (stable or off) must be set', undefined, 'missing');
      if (hasName && doc.auto !== undefined && doc.auto !== 'off') {
        report(['auto'], `"auto: ${String(doc.auto)}" and "hostname" cannot be set together: a static hostname needs no automatic one (remove "auto", or set it to off)`, 'key');
      }
    },
    conflicts: [
      { path: ['machine', 'network', 'hostname'], isSet: (v) => typeof v === 'string' && v !== '' },
      { path: ['machine', 'features', 'stableHostname'], isSet: isTrue },
    ],
  },
  {
    kind: 'ResolverConfig',
    get schema() {
      return networkKindSchemas().resolverConfigSchema;
    },
    named: false,
    example: { nameservers: [{ address: '1.1.1.1' }] },
    conflicts: [
      { path: ['machine', 'network', 'nameservers'], isSet: nonEmptyList, when: 'nameservers' },
      { path: ['machine', 'network', 'searchDomains'], isSet: present, when: 'searchDomains' },
      { path: ['machine', 'network', 'disableSearchDomain'], isSet: isTrue, when: 'searchDomains' },
    ],
  },
  {
    kind: 'TimeSyncConfig',
    get schema() {
      return networkKindSchemas().timeSyncConfigSchema;
    },
    named: false,
    example: { ntp: { servers: ['pool.ntp.org'] } },
    conflicts: [
      { path: ['machine', 'time', 'disabled'], isSet: isTrue },
      { path: ['machine', 'time', 'servers'], isSet: nonEmptyList },
      { path: ['machine', 'time', 'bootTimeout'], isSet: present },
    ],
  },
  {
    kind: 'LinkConfig',
    get schema() {
      return networkKindSchemas().linkConfigSchema;
    },
    named: true,
    example: { name: 'eth0', addresses: [{ address: '192.168.1.10/24' }], routes: [{ gateway: '192.168.1.1' }] },
    check(doc, report) {
      asArray(doc.routes).forEach((r, i) => {
        const route = asObject(r);
        if (!route) return;
        checkRouteFamilies(route.destination, route.gateway, report, ['routes', i, 'gateway'], 'destination');
      });
    },
    conflicts: [],
  },
  {
    kind: 'DHCPv4Config',
    get schema() {
      return networkKindSchemas().dhcpv4ConfigSchema;
    },
    named: true,
    example: { name: 'eth0' },
    check(doc, report) {
      if (doc.duidRaw !== undefined && doc.clientIdentifier !== 'duid') {
        report(['duidRaw'], 'duidRaw is only used with "clientIdentifier: duid"', 'key');
      }
      if (doc.clientIdentifier === 'duid' && doc.duidRaw === undefined) {
        report(['clientIdentifier'], '"clientIdentifier: duid" needs duidRaw (the DUID as colon-separated hex bytes)', undefined, 'missing');
      }
    },
    conflicts: [],
  },
  {
    kind: 'BondConfig',
    get schema() {
      return networkKindSchemas().bondConfigSchema;
    },
    named: true,
    example: { name: 'bond0', links: ['eth1', 'eth2'], bondMode: 'active-backup', miimon: 100 },
    check: checkMembers,
    conflicts: [],
  },
  {
    kind: 'BridgeConfig',
    get schema() {
      return networkKindSchemas().bridgeConfigSchema;
    },
    named: true,
    example: { name: 'br0', links: ['eth1'], stp: { enabled: true } },
    check: checkMembers,
    conflicts: [],
  },
  {
    kind: 'StaticHostConfig',
    get schema() {
      return networkKindSchemas().staticHostConfigSchema;
    },
    named: true,
    example: { name: '10.5.0.2', hostnames: ['my-server', 'my-server.example.org'] },
    conflicts: [{ path: ['machine', 'network', 'extraHostEntries'], isSet: nonEmptyList }],
  },
];

type Schemas = ReturnType<typeof build>;
export type HostnameConfig = z.output<Schemas['hostnameConfigSchema']>;
export type ResolverConfig = z.output<Schemas['resolverConfigSchema']>;
export type TimeSyncConfig = z.output<Schemas['timeSyncConfigSchema']>;
export type LinkConfig = z.output<Schemas['linkConfigSchema']>;
export type DHCPv4Config = z.output<Schemas['dhcpv4ConfigSchema']>;
export type StaticHostConfig = z.output<Schemas['staticHostConfigSchema']>;
export type BondConfig = z.output<Schemas['bondConfigSchema']>;
export type BridgeConfig = z.output<Schemas['bridgeConfigSchema']>;
