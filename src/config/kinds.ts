// Typed configuration documents that sit beside the v1alpha1 document in the same YAML stream,
// each `apiVersion: v1alpha1` + `kind` (Talos's multi-document configuration), for what Bronze
// implements: HostnameConfig, ResolverConfig, TimeSyncConfig, LinkConfig, DHCPv4Config.
//
// KINDS declares each kind as data: its schema, whether documents are named (one per link), the
// checks across its own fields, and what it conflicts with in the v1alpha1 document.
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
  type Obj,
  type Reporter,
} from './fields.ts';

export const KIND_API_VERSION = 'v1alpha1';

const apiVersion = z.literal(KIND_API_VERSION);

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

export type HostnameConfig = z.output<typeof hostnameConfigSchema>;
export type ResolverConfig = z.output<typeof resolverConfigSchema>;
export type TimeSyncConfig = z.output<typeof timeSyncConfigSchema>;
export type LinkConfig = z.output<typeof linkConfigSchema>;
export type DHCPv4Config = z.output<typeof dhcpv4ConfigSchema>;

export type KindDocument = HostnameConfig | ResolverConfig | TimeSyncConfig | LinkConfig | DHCPv4Config;
export type KindName = KindDocument['kind'];

/** A v1alpha1 field that a kind replaces: setting both is a conflict. */
export interface V1Alpha1Conflict {
  path: readonly string[];
  /** Whether the v1alpha1 value counts as set (e.g. a non-empty list, `disabled: true`). */
  isSet(value: unknown): boolean;
}

export interface KindSpec {
  kind: KindName;
  schema: z.ZodType;
  /** Named documents (one per link) are identified by `name`; others may appear once. */
  named: boolean;
  /** Checks across the document's fields, on raw data (run whatever the schema found). */
  check?(doc: Obj, report: Reporter): void;
  conflicts: readonly V1Alpha1Conflict[];
}

const nonEmptyList = (v: unknown) => Array.isArray(v) && v.length > 0;
const present = (v: unknown) => v !== undefined;
const isTrue = (v: unknown) => v === true;

export const KINDS: readonly KindSpec[] = [
  {
    kind: 'HostnameConfig',
    schema: hostnameConfigSchema,
    named: false,
    check(doc, report) {
      const hasName = typeof doc.hostname === 'string' && doc.hostname !== '';
      if (doc.auto === undefined && !hasName) report([], 'either "hostname" or "auto" (stable or off) must be set');
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
    conflicts: [
      { path: ['machine', 'network', 'nameservers'], isSet: nonEmptyList },
      { path: ['machine', 'network', 'searchDomains'], isSet: present },
      { path: ['machine', 'network', 'disableSearchDomain'], isSet: isTrue },
    ],
  },
  {
    kind: 'TimeSyncConfig',
    schema: timeSyncConfigSchema,
    named: false,
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
    check(doc, report) {
      if (doc.duidRaw !== undefined && doc.clientIdentifier !== 'duid') {
        report(['duidRaw'], 'duidRaw is only used with "clientIdentifier: duid"', 'key');
      }
      if (doc.clientIdentifier === 'duid' && doc.duidRaw === undefined) {
        report(['clientIdentifier'], '"clientIdentifier: duid" needs duidRaw (the DUID as colon-separated hex bytes)');
      }
    },
    conflicts: [],
  },
];

export function kindSpec(kind: unknown): KindSpec | undefined {
  return KINDS.find((k) => k.kind === kind);
}

/** Talos fields of these kinds that Bronze does not implement (see TALOS_ONLY_FIELDS). */
export const TALOS_ONLY_KIND_FIELDS: Readonly<Record<string, readonly string[]>> = {
  ResolverConfig: ['hostDNS'],
  'ResolverConfig.nameservers[]': ['protocol', 'tlsServerName'],
  TimeSyncConfig: ['ptp'],
  'LinkConfig.routes[]': ['table'],
};

/** The documents of one kind, typed. */
export function documentsOfKind<K extends KindName>(documents: readonly KindDocument[], kind: K): Extract<KindDocument, { kind: K }>[] {
  return documents.filter((d): d is Extract<KindDocument, { kind: K }> => d.kind === kind);
}
