// Field builders for the configuration schemas (zod): each checks one value's format with
// formats.ts and says what is wrong and what is expected; plus the helpers for checks on raw (not
// yet validated) data shared by validate.ts and the kinds.
//
// YAML details follow Talos (go-yaml v3): boolean fields also take yes/no/on/off, and any scalar
// is read into a string field ("1", "true").
import { z } from '../lib/zod.ts';
import {
  absolutePathError,
  base64PemError,
  dnsNameError,
  familyName,
  FILES_PREFIX,
  hasHostBits,
  hostnameError,
  interfaceNameError,
  ipBytes,
  ipFamily,
  isUnspecified,
  maskedPrefix,
  parseGoDuration,
  parseIPPrefix,
  TOKEN_PATTERN,
} from './formats.ts';

const q = (v: unknown) => JSON.stringify(v);

/** A string checked by `check`, which returns the full message (or undefined). */
export function checked(check: (s: string) => string | undefined) {
  return z.string().superRefine((s, ctx) => {
    const message = check(s);
    if (message) ctx.addIssue({ code: 'custom', message });
  });
}

/** `what` names the kind of value in messages: `"x" is not a valid <what>: <reason>`. */
export function formatted(what: string, check: (s: string) => string | undefined) {
  return checked((s) => {
    const reason = check(s);
    return reason ? `${q(s)} is not a valid ${what}: ${reason}` : undefined;
  });
}

const YAML11_BOOL: Record<string, boolean> = {
  yes: true, Yes: true, YES: true, on: true, On: true, ON: true, y: true, Y: true,
  no: false, No: false, NO: false, off: false, Off: false, OFF: false, n: false, N: false,
};

/** A boolean; as go-yaml does for typed bool fields, also YAML 1.1's yes/no/on/off. */
export const bool = () => z.preprocess((v) => (typeof v === 'string' && v in YAML11_BOOL ? YAML11_BOOL[v] : v), z.boolean());

/** An integer in [min, max]. */
export function intIn(min: number, max: number, what: string) {
  return z.number().superRefine((n, ctx) => {
    if (!Number.isInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: 'custom', message: `${n} is not a valid ${what}: expected an integer from ${min} to ${max}` });
    }
  });
}

export const uint32 = (what: string) => intIn(0, 0xffff_ffff, what);

/** MTU for interfaces, VLANs and links (Bronze's range). */
export const MTU_RANGE = { min: 576, max: 9216 } as const;
export const mtu = () => intIn(MTU_RANGE.min, MTU_RANGE.max, 'MTU');

export const ipAddress = () =>
  formatted('IP address', (s) => (ipBytes(s) ? undefined : 'expected an IPv4 address such as 192.168.1.1 or an IPv6 address such as fd00::1'));

/** `address/bits` where host bits may be set (an interface address). */
export const cidrAddress = () =>
  formatted('CIDR address', (s) => {
    const p = parseIPPrefix(s);
    if (typeof p === 'string') return p;
    if (isUnspecified(p.bytes)) return `the unspecified address ${p.address} cannot be assigned`;
    return undefined;
  });

/** v1alpha1 interface addresses: CIDR, or a bare address meaning a host prefix (Talos). */
export const ipOrCidr = () =>
  formatted('address', (s) => {
    const p = parseIPPrefix(s, true);
    if (typeof p === 'string') return p;
    if (isUnspecified(p.bytes)) return `the unspecified address ${p.address} cannot be assigned`;
    return undefined;
  });

/** A route destination: a network prefix without host bits. */
export const network = () =>
  formatted('network', (s) => {
    const p = parseIPPrefix(s);
    if (typeof p === 'string') return p;
    if (hasHostBits(p)) return `host bits are set beyond /${p.bits}: did you mean ${maskedPrefix(p)}?`;
    return undefined;
  });

/** A route gateway or source: an address, not the unspecified one. */
export const routeAddress = (what: string) =>
  formatted(what, (s) => {
    const b = ipBytes(s);
    if (!b) return 'expected an IPv4 or IPv6 address';
    if (isUnspecified(b)) return 'the unspecified address cannot be used';
    return undefined;
  });

/** etcd subnets: CIDR or address, optionally negated with "!". */
export const subnetMatch = () => formatted('subnet', (s) => {
  const p = parseIPPrefix(s.replace(/^!/, ''), true);
  return typeof p === 'string' ? p : undefined;
});

export const hostname = () => formatted('hostname', hostnameError);
export const dnsName = (what = 'domain name') => formatted(what, dnsNameError);
export const interfaceName = () => formatted('interface name', interfaceNameError);

export const goDuration = () =>
  checked((s) => {
    const ms = parseGoDuration(s);
    if (ms === undefined) return `${q(s)} is not a valid duration: expected a Go duration such as 30s, 2m30s or 1h`;
    if (ms < 0) return `${q(s)} is negative: expected a duration of 0 or more`;
    return undefined;
  });

export const token = (what: string) =>
  checked((s) => (TOKEN_PATTERN.test(s) ? undefined : `${q(s)} is not a valid ${what}: expected 6 then 16 lowercase letters or digits separated by a dot ([a-z0-9]{6}.[a-z0-9]{16})`));

export const nonEmpty = (what: string) => checked((s) => (s.trim() === '' ? `${what} must not be empty` : undefined));

export const noSpaces = (what: string) =>
  checked((s) => (s === '' ? `${what} must not be empty` : /\s/.test(s) ? `${q(s)} is not a valid ${what}: it must not contain white space` : undefined));

export const base64Certificate = () => checked((s) => base64PemError(s, 'certificate'));
/** A private key, or "" (how Talos writes "no key" on workers). */
export const base64KeyOrEmpty = () => checked((s) => (s === '' ? undefined : base64PemError(s, 'private key')));

export const certificateAndKey = () =>
  z.strictObject({
    crt: base64Certificate(),
    key: base64KeyOrEmpty().optional(),
  });

export const absolutePath = (what: string) => checked((s) => {
  const reason = absolutePathError(s);
  return reason ? `${q(s)} is not a valid ${what}: ${reason}` : undefined;
});

/** A https URL with a host and nothing after it but an optional "/". */
export const httpsEndpoint = () =>
  checked((s) => {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      return `${q(s)} is not a URL: expected https://<host>:<port>, e.g. https://10.0.0.1:6443`;
    }
    if (u.protocol !== 'https:') return `${q(s)} uses ${u.protocol.replace(/:$/, '')}: expected an https:// URL`;
    if (!u.hostname) return `${q(s)} has no host: expected https://<host>:<port>`;
    if (u.username || u.password) return `${q(s)} must not carry credentials`;
    if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) return `${q(s)} must not have a path, query or fragment`;
    return undefined;
  });

export const httpEndpoint = () =>
  checked((s) => {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      return `${q(s)} is not a URL: expected e.g. https://discovery.example.com/`;
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return `${q(s)}: expected an http:// or https:// URL`;
    if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) return `${q(s)} must not have a path, query or fragment`;
    return undefined;
  });

const BYTE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1e3, kb: 1e3, kib: 1024, m: 1e6, mb: 1e6, mib: 1024 ** 2, g: 1e9, gb: 1e9, gib: 1024 ** 3, t: 1e12, tb: 1e12, tib: 1024 ** 4 };

/** A byte size as Talos writes it (go-humanize): 1048576, "1MiB", "1.5 GB". */
export function parseByteSize(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(v.trim());
  const unit = m ? BYTE_UNITS[m[2]!.toLowerCase()] : undefined;
  return m && unit !== undefined ? Math.round(Number(m[1]) * unit) : undefined;
}

export const byteSize = (what: string) =>
  z.union([z.number(), z.string()]).superRefine((v, ctx) => {
    if (parseByteSize(v) === undefined) ctx.addIssue({ code: 'custom', message: `${q(v)} is not a valid ${what}: expected a number of bytes or a size such as 1MiB or 1GiB` });
  });

/** Scalar map values: go-yaml decodes any scalar into a string field, so 1 and true become "1" and "true". */
export const scalarString = () => z.preprocess((v) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v), z.string());

/** A map whose keys are checked by `keyError` (reported at the key: see invalid_key in validate.ts). */
export function keyedMap<V extends z.ZodType>(value: V, keyError: (k: string) => string | undefined, what: string) {
  const key = z.string().superRefine((k, ctx) => {
    const reason = keyError(k);
    if (reason) ctx.addIssue({ code: 'custom', message: `${q(k)} is not a valid ${what}: ${reason}` });
  });
  return z.record(key, value);
}

export const fileMode = () =>
  z.number().superRefine((n, ctx) => {
    if (!Number.isInteger(n) || n < 0 || n > 0o7777) {
      ctx.addIssue({ code: 'custom', message: `${Number.isInteger(n) && n >= 0 ? `0o${n.toString(8)}` : n} is not a valid file mode: expected an octal number from 0o0 to 0o7777, e.g. 0o644` });
    }
  });

export const machineFilePath = () =>
  checked((s) => {
    const reason = absolutePathError(s);
    if (reason) return `${q(s)} is not a valid file path: ${reason}`;
    if (!s.startsWith(FILES_PREFIX) || s.length === FILES_PREFIX.length) {
      return `${q(s)} is outside /var: Bronze's root filesystem is read-only, so machine files can only be written under /var/`;
    }
    return undefined;
  });

/**
 * NTP servers: a host name or an IP address, optionally with a port (`host:port`,
 * `[v6]:port`), or a PTP device path /dev/ptp* (as Talos).
 */
export const timeServer = () =>
  checked((s) => {
    if (/^\/dev\/ptp[A-Za-z0-9_]*$/.test(s)) return undefined;
    if (ipBytes(s)) return undefined;
    const withPort = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(s);
    const host = withPort ? (withPort[1] ?? withPort[2]!) : s;
    if (withPort && (Number(withPort[3]) < 1 || Number(withPort[3]) > 65535)) return `${q(s)} is not a valid time server: port ${withPort[3]} is out of range (1-65535)`;
    if (withPort && ipBytes(host)) return undefined;
    const reason = dnsNameError(host);
    return reason ? `${q(s)} is not a valid time server: expected a host name or an IP address (optionally with :port), or a PTP device (/dev/ptp0): ${reason}` : undefined;
  });

export const kernelArg = () =>
  checked((s) => (s === '' ? 'a kernel argument must not be empty' : /\s/.test(s) ? `${q(s)} is not a single kernel argument: it contains white space` : undefined));

/** etcd arguments Bronze sets itself (Talos's list). */
export const ETCD_RESERVED_ARGS = [
  'name', 'data-dir', 'initial-cluster-state', 'listen-peer-urls', 'listen-client-urls', 'cert-file', 'key-file',
  'trusted-ca-file', 'peer-client-cert-auth', 'peer-cert-file', 'peer-trusted-ca-file', 'peer-key-file',
] as const;

// ---------------------------------------------------------------------------------------------
// Helpers for checks on raw (not yet validated) data, shared by validate.ts and kinds.ts.
// ---------------------------------------------------------------------------------------------

export type PathSegment = string | number;
export type Obj = Record<string, unknown>;

/** What an issue is: an error (invalid, unsupported, missing a value) or a warning. */
export type ErrorKind = 'invalid' | 'unsupported' | 'missing';
export type WarningKind = 'ignored' | 'kept' | 'deprecated' | 'defaulted' | 'advice';
export type IssueKind = ErrorKind | WarningKind;

export const WARNING_KINDS: ReadonlySet<IssueKind> = new Set<IssueKind>(['ignored', 'kept', 'deprecated', 'defaulted', 'advice']);

/**
 * Reports a problem at `path` (relative to the document). `at: 'key'` points at the key, not the
 * value; `kind` says what it is (default: invalid).
 */
export type Reporter = (path: readonly PathSegment[], message: string, at?: 'key' | 'value', kind?: IssueKind) => void;

export function asObject(v: unknown): Obj | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
}

export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function asString(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** The family of a route's destination and gateway, when both parse; reports a mismatch. */
export function checkRouteFamilies(
  destination: unknown,
  gateway: unknown,
  report: Reporter,
  gatewayPath: readonly PathSegment[],
  destinationField: string,
): void {
  if (typeof destination !== 'string' || typeof gateway !== 'string') return;
  const p = parseIPPrefix(destination);
  const g = ipFamily(gateway);
  if (typeof p === 'string' || !g || p.family === g) return;
  report(
    gatewayPath,
    `gateway ${gateway} is ${familyName(g)} but ${destinationField} ${destination} is ${familyName(p.family)}: a route's gateway must be of the same address family as its destination`,
  );
}
