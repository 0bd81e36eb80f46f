// Typed network documents Bronze implements (networkd applies them): HostnameConfig,
// ResolverConfig, TimeSyncConfig (timed), LinkConfig, DHCPv4Config and StaticHostConfig. Field
// names and meanings are Talos's; the Talos fields Bronze does not implement are in policy.ts.
import { z } from 'zod';
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
  ipAddress,
  mtu,
  network,
  routeAddress,
  timeServer,
  uint32,
} from './fields.ts';
import type { KindSpec } from './kind-spec.ts';

const apiVersion = z.literal('v1alpha1');

export const hostnameConfigSchema = z.strictObject({
  apiVersion,
  kind: z.literal('HostnameConfig'),
  /** `stable`: a name derived from the machine's identity; `off`: wait for DHCP or another source. */
  auto: z.enum(['stable', 'off']).optional(),
  hostname: hostname().optional(),
});

export const resolverConfigSchema = z.strictObject({
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

export const timeSyncConfigSchema = z.strictObject({
  apiVersion,
  kind: z.literal('TimeSyncConfig'),
  enabled: bool().optional(),
  bootTimeout: goDuration().optional(),
  ntp: z.strictObject({ servers: z.array(timeServer()).optional() }).optional(),
});

export const linkAddressSchema = z.strictObject({
  address: cidrAddress(),
  routePriority: uint32('route priority').optional(),
});

export const linkRouteSchema = z.strictObject({
  destination: network().optional(),
  gateway: routeAddress('gateway').optional(),
  source: routeAddress('source address').optional(),
  metric: uint32('route metric').optional(),
  mtu: mtu().optional(),
});

export const linkConfigSchema = z.strictObject({
  apiVersion,
  kind: z.literal('LinkConfig'),
  name: interfaceName(),
  up: bool().optional(),
  mtu: mtu().optional(),
  addresses: z.array(linkAddressSchema).optional(),
  routes: z.array(linkRouteSchema).optional(),
  multicast: bool().optional(),
});

export const dhcpv4ConfigSchema = z.strictObject({
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

export const staticHostConfigSchema = z.strictObject({
  apiVersion,
  kind: z.literal('StaticHostConfig'),
  /** The IP address the host names map to. */
  name: ipAddress(),
  hostnames: z.array(dnsName('host name')).min(1),
});

const nonEmptyList = (v: unknown) => Array.isArray(v) && v.length > 0;
const present = (v: unknown) => v !== undefined;
const isTrue = (v: unknown) => v === true;

export const NETWORK_KINDS: readonly KindSpec[] = [
  {
    kind: 'HostnameConfig',
    schema: hostnameConfigSchema,
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
    schema: resolverConfigSchema,
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
    schema: timeSyncConfigSchema,
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
    schema: linkConfigSchema,
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
    schema: dhcpv4ConfigSchema,
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
    kind: 'StaticHostConfig',
    schema: staticHostConfigSchema,
    named: true,
    example: { name: '10.5.0.2', hostnames: ['my-server', 'my-server.example.org'] },
    conflicts: [{ path: ['machine', 'network', 'extraHostEntries'], isSet: nonEmptyList }],
  },
];

export type HostnameConfig = z.output<typeof hostnameConfigSchema>;
export type ResolverConfig = z.output<typeof resolverConfigSchema>;
export type TimeSyncConfig = z.output<typeof timeSyncConfigSchema>;
export type LinkConfig = z.output<typeof linkConfigSchema>;
export type DHCPv4Config = z.output<typeof dhcpv4ConfigSchema>;
export type StaticHostConfig = z.output<typeof staticHostConfigSchema>;
