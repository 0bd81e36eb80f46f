// The v1alpha1 machine configuration document, Talos-compatible for the parts Bronze implements:
// zod schemas for the structure and per-field formats, and the TypeScript types inferred from them.
//
// Every object is strict (an unknown field is an error). Field formats (IP, CIDR, hostname, Go
// duration, token, base64 PEM, ...) are checked here, each with a message saying what is wrong and
// what is expected; checks that involve several fields (a controlplane needs the CA key, a route's
// gateway must be of its network's family, ...) are in validate.ts.
//
// YAML details follow Talos (go-yaml v3): `0644` and `0o644` are octal numbers (document.ts), and
// boolean fields also take `yes`/`no`/`on`/`off`. A null value in a mapping means "not set".
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { isIP } from 'node:net';
import { z } from 'zod';
import { PRIVATE_KEY_LABELS, fromBase64Pem, normalizePrivateKeyPem, pemDecode } from '../pki/pem.ts';

// ---------------------------------------------------------------------------------------------
// Pure format checks: each returns undefined when the value is fine, else the reason it is not.
// ---------------------------------------------------------------------------------------------

export interface IPPrefix {
  /** The address part as written. */
  address: string;
  family: 4 | 6;
  /** Prefix length; a bare address counts as a host prefix (32 or 128). */
  bits: number;
  /** The address as 4 or 16 bytes. */
  bytes: number[];
}

/** The bytes of an IPv4 or IPv6 address (no zone), or undefined when it is not one. */
export function ipBytes(ip: string): number[] | undefined {
  const family = isIP(ip);
  if (family === 4) return ip.split('.').map(Number);
  if (family !== 6 || ip.includes('%')) return undefined;
  let text = ip;
  let tail: number[] = [];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    tail = v4[1]!.split('.').map(Number);
    text = text.slice(0, -v4[1]!.length) + '0:0';
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const groups = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const h = groups(head);
  const r = rest === undefined ? [] : groups(rest);
  const all = rest === undefined ? h : [...h, ...new Array<number>(8 - h.length - r.length).fill(0), ...r];
  const bytes = all.flatMap((g) => [g >> 8, g & 0xff]);
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

export function ipFamily(ip: string): 4 | 6 | undefined {
  const f = isIP(ip);
  return f === 4 || f === 6 ? f : undefined;
}

function familyName(f: 4 | 6): string {
  return f === 4 ? 'IPv4' : 'IPv6';
}

/** Parses `address/bits`; with `allowBare`, a plain address too. Returns the reason on failure. */
export function parseIPPrefix(s: string, allowBare = false): IPPrefix | string {
  const slash = s.lastIndexOf('/');
  if (slash < 0) {
    if (!allowBare) {
      return ipFamily(s) ? 'the prefix length is missing (e.g. 192.168.1.10/24 or fd00::1/64)' : 'expected an address/prefix-length such as 192.168.1.0/24 or fd00::/64';
    }
    const bytes = ipBytes(s);
    if (!bytes) return 'expected an IPv4 or IPv6 address, optionally with a prefix length (192.168.1.10/24)';
    return { address: s, family: bytes.length === 4 ? 4 : 6, bits: bytes.length * 8, bytes };
  }
  const address = s.slice(0, slash);
  const bitsText = s.slice(slash + 1);
  const bytes = ipBytes(address);
  if (!bytes) return `"${address}" is not an IPv4 or IPv6 address`;
  const family: 4 | 6 = bytes.length === 4 ? 4 : 6;
  const max = bytes.length * 8;
  if (!/^\d{1,3}$/.test(bitsText) || Number(bitsText) > max) {
    return `prefix length "${bitsText}" is out of range: ${familyName(family)} allows 0 to ${max}`;
  }
  return { address, family, bits: Number(bitsText), bytes };
}

/** True when bits beyond the prefix length are set (10.0.0.1/8). */
export function hasHostBits(p: IPPrefix): boolean {
  return p.bytes.some((b, i) => {
    const keep = Math.max(0, Math.min(8, p.bits - i * 8));
    return (b & (0xff >> keep)) !== 0;
  });
}

/** The prefix with host bits cleared, as text (for "did you mean"). */
export function maskedPrefix(p: IPPrefix): string {
  const bytes = p.bytes.map((b, i) => b & ((0xff00 >> Math.max(0, Math.min(8, p.bits - i * 8))) & 0xff));
  if (p.family === 4) return `${bytes.join('.')}/${p.bits}`;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  // Compress the longest run of zero groups, as RFC 5952.
  let best = [-1, 0];
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best[1]! && j - i > 1) best = [i, j - i];
    i = j;
  }
  const text = best[0]! < 0 ? groups.join(':') : `${groups.slice(0, best[0]).join(':')}::${groups.slice(best[0]! + best[1]!).join(':')}`;
  return `${text}/${p.bits}`;
}

function isUnspecified(bytes: number[]): boolean {
  return bytes.every((b) => b === 0);
}

const LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/i;

/** RFC 1123 host name: labels of letters, digits and "-" (not at either end), 1-63 long, 253 in all. */
export function hostnameError(name: string): string | undefined {
  if (name === '') return 'it is empty';
  if (name.length > 253) return `it is ${name.length} characters long, at most 253 are allowed`;
  for (const label of name.split('.')) {
    if (label === '') return 'it has an empty label (two dots in a row, or a dot at either end)';
    if (label.length > 63) return `label "${label}" is ${label.length} characters long, at most 63 are allowed`;
    if (!LABEL.test(label)) {
      return `label "${label}" must consist of letters, digits and "-", and start and end with a letter or digit (RFC 1123)`;
    }
  }
  return undefined;
}

const DNS_LABEL = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?$/i;

/** A DNS domain name (search domains, aliases): as a host name, but "_" is allowed and one trailing dot. */
export function dnsNameError(name: string): string | undefined {
  if (name === '') return 'it is empty';
  const body = name.endsWith('.') ? name.slice(0, -1) : name;
  if (body.length > 253) return `it is ${body.length} characters long, at most 253 are allowed`;
  for (const label of body.split('.')) {
    if (label === '') return 'it has an empty label';
    if (label.length > 63) return `label "${label}" is longer than 63 characters`;
    if (!DNS_LABEL.test(label)) return `label "${label}" must consist of letters, digits, "-" and "_", and not start or end with "-"`;
  }
  return undefined;
}

/** Linux interface names: 1 to 15 bytes, no "/", ":" or white space, not "." or "..". */
export function interfaceNameError(name: string): string | undefined {
  if (name === '') return 'it is empty';
  if (Buffer.byteLength(name) > 15) return `it is ${Buffer.byteLength(name)} bytes long, Linux allows at most 15`;
  if (/[\s/:]/.test(name) || name === '.' || name === '..') return 'it must not contain "/", ":" or white space';
  return undefined;
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION_PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;

/** A Go `time.Duration` string ("2m30s", "1h", "500ms", "0") in milliseconds; undefined if malformed. */
export function parseGoDuration(s: string): number | undefined {
  let i = 0;
  let sign = 1;
  if (s[0] === '+' || s[0] === '-') {
    sign = s[0] === '-' ? -1 : 1;
    i = 1;
  }
  if (s.slice(i) === '0') return 0;
  if (i >= s.length) return undefined;
  let total = 0;
  while (i < s.length) {
    DURATION_PART.lastIndex = i;
    const m = DURATION_PART.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * DURATION_UNITS[m[2]!]!;
    i = DURATION_PART.lastIndex;
  }
  return sign * total;
}

/** Talos tokens (trustd join token, Kubernetes bootstrap token): `[a-z0-9]{6}.[a-z0-9]{16}`. */
export const TOKEN_PATTERN = /^[a-z0-9]{6}\.[a-z0-9]{16}$/;

/** Roots of /proc/sys: a sysctl key names a file under one of them. */
export const SYSCTL_ROOTS = ['abi', 'crypto', 'debug', 'dev', 'fs', 'kernel', 'net', 'sunrpc', 'user', 'vm'] as const;

/**
 * A sysctl key, dotted (`net.ipv4.ip_forward`) or slashed (`net/ipv6/conf/eth0.100/disable_ipv6`,
 * which lets a segment contain a dot), under one of the /proc/sys roots.
 */
export function sysctlKeyError(key: string): string | undefined {
  const slashed = key.includes('/');
  const parts = slashed ? key.split('/') : key.split('.');
  const segment = slashed ? /^[A-Za-z0-9_.:@+-]+$/ : /^[A-Za-z0-9_:@+-]+$/;
  if (parts.length < 2 || parts.some((p) => !segment.test(p) || p === '.' || p === '..')) {
    return 'expected a dotted path under /proc/sys such as net.ipv4.ip_forward (or net/ipv6/conf/eth0.100/disable_ipv6 when a segment contains a dot)';
  }
  if (!(SYSCTL_ROOTS as readonly string[]).includes(parts[0]!)) {
    return `"${parts[0]}" is not a /proc/sys directory: expected one of ${SYSCTL_ROOTS.join(', ')}`;
  }
  return undefined;
}

/** A sysfs key: a dotted path under /sys (`devices.system.cpu.cpu0.cpufreq.scaling_governor`). */
export function sysfsKeyError(key: string): string | undefined {
  const parts = key.split('.');
  if (parts.length < 2 || parts.some((p) => !/^[A-Za-z0-9_:@+-]+$/.test(p))) {
    return 'expected a dotted path under /sys such as devices.system.cpu.cpu0.cpufreq.scaling_governor';
  }
  return undefined;
}

/** Environment variable names: a letter or "_", then letters, digits or "_". */
export function envNameError(name: string): string | undefined {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? undefined : 'expected a letter or "_" followed by letters, digits or "_" (e.g. HTTPS_PROXY)';
}

/** An absolute, normalised path: starts with "/", no "." or ".." segments, no empty segments. */
export function absolutePathError(p: string): string | undefined {
  if (!p.startsWith('/')) return 'it is not an absolute path';
  const segs = p.split('/').slice(1);
  if (segs.some((s, i) => s === '.' || s === '..' || (s === '' && i < segs.length - 1))) {
    return 'it must be normalised (no "//", "." or ".." segments)';
  }
  if (p.includes('\0')) return 'it contains a NUL byte';
  return undefined;
}

/** Where machine.files may write: Bronze's root is read-only, only /var (EPHEMERAL) is writable. */
export const FILES_PREFIX = '/var/';

function base64PemError(b64: string, what: 'certificate' | 'private key'): string | undefined {
  let pem: string;
  try {
    pem = fromBase64Pem(b64);
  } catch {
    return `not base64: expected the base64 encoding of a PEM ${what}`;
  }
  try {
    if (what === 'certificate') {
      pemDecode(pem, ['CERTIFICATE']);
      new X509Certificate(pem);
    } else {
      pemDecode(pem, PRIVATE_KEY_LABELS);
      createPrivateKey(normalizePrivateKeyPem(pem));
    }
  } catch (err) {
    const reason = (err as Error).message;
    return `the base64 decodes to no valid PEM ${what}${/PEM/.test(reason) ? ` (${reason})` : ''}`;
  }
  return undefined;
}

/** A base64-of-PEM certificate and (optional, possibly empty) key decoded, or undefined if not valid. */
export function decodeCertificateAndKey(crt: unknown, key: unknown): { crt: X509Certificate; key?: ReturnType<typeof createPrivateKey> } | undefined {
  try {
    const c = new X509Certificate(fromBase64Pem(crt as string));
    if (typeof key !== 'string' || key === '') return { crt: c };
    return { crt: c, key: createPrivateKey(normalizePrivateKeyPem(fromBase64Pem(key))) };
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Schema building blocks.
// ---------------------------------------------------------------------------------------------

const q = (v: unknown) => JSON.stringify(v);

/** A string checked by `check`, which returns the full message (or undefined). */
function checked(check: (s: string) => string | undefined) {
  return z.string().superRefine((s, ctx) => {
    const message = check(s);
    if (message) ctx.addIssue({ code: 'custom', message });
  });
}

/** `what` names the kind of value in messages: `"x" is not a valid <what>: <reason>`. */
function formatted(what: string, check: (s: string) => string | undefined) {
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
const subnetMatch = () => formatted('subnet', (s) => {
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

const token = (what: string) =>
  checked((s) => (TOKEN_PATTERN.test(s) ? undefined : `${q(s)} is not a valid ${what}: expected 6 then 16 lowercase letters or digits separated by a dot ([a-z0-9]{6}.[a-z0-9]{16})`));

const nonEmpty = (what: string) => checked((s) => (s.trim() === '' ? `${what} must not be empty` : undefined));

const noSpaces = (what: string) =>
  checked((s) => (s === '' ? `${what} must not be empty` : /\s/.test(s) ? `${q(s)} is not a valid ${what}: it must not contain white space` : undefined));

const base64Certificate = () => checked((s) => base64PemError(s, 'certificate'));
/** A private key, or "" (how Talos writes "no key" on workers). */
const base64KeyOrEmpty = () => checked((s) => (s === '' ? undefined : base64PemError(s, 'private key')));

export const certificateAndKey = () =>
  z.strictObject({
    crt: base64Certificate(),
    key: base64KeyOrEmpty().optional(),
  });

const absolutePath = (what: string) => checked((s) => {
  const reason = absolutePathError(s);
  return reason ? `${q(s)} is not a valid ${what}: ${reason}` : undefined;
});

/** A https URL with a host and nothing after it but an optional "/". */
const httpsEndpoint = () =>
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

const httpEndpoint = () =>
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

/** Scalar map values: go-yaml decodes any scalar into a string field, so 1 and true become "1" and "true". */
const scalarString = () => z.preprocess((v) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v), z.string());

/** A map whose keys are checked by `keyError` (reported at the key: see invalid_key in validate.ts). */
function keyedMap<V extends z.ZodType>(value: V, keyError: (k: string) => string | undefined, what: string) {
  const key = z.string().superRefine((k, ctx) => {
    const reason = keyError(k);
    if (reason) ctx.addIssue({ code: 'custom', message: `${q(k)} is not a valid ${what}: ${reason}` });
  });
  return z.record(key, value);
}

const fileMode = () =>
  z.number().superRefine((n, ctx) => {
    if (!Number.isInteger(n) || n < 0 || n > 0o7777) {
      ctx.addIssue({ code: 'custom', message: `${Number.isInteger(n) && n >= 0 ? `0o${n.toString(8)}` : n} is not a valid file mode: expected an octal number from 0o0 to 0o7777, e.g. 0o644` });
    }
  });

const machineFilePath = () =>
  checked((s) => {
    const reason = absolutePathError(s);
    if (reason) return `${q(s)} is not a valid file path: ${reason}`;
    if (!s.startsWith(FILES_PREFIX) || s.length === FILES_PREFIX.length) {
      return `${q(s)} is outside /var: machine files can only be written under /var/ (the root filesystem is read-only; Talos also refuses to create files outside /var)`;
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

const kernelArg = () =>
  checked((s) => (s === '' ? 'a kernel argument must not be empty' : /\s/.test(s) ? `${q(s)} is not a single kernel argument: it contains white space` : undefined));

/** etcd arguments Bronze sets itself (Talos's list). */
export const ETCD_RESERVED_ARGS = [
  'name', 'data-dir', 'initial-cluster-state', 'listen-peer-urls', 'listen-client-urls', 'cert-file', 'key-file',
  'trusted-ca-file', 'peer-client-cert-auth', 'peer-cert-file', 'peer-trusted-ca-file', 'peer-key-file',
] as const;

// ---------------------------------------------------------------------------------------------
// The v1alpha1 document.
// ---------------------------------------------------------------------------------------------

export const routeSchema = z.strictObject({
  network: network().optional(),
  gateway: routeAddress('gateway').optional(),
  source: routeAddress('source address').optional(),
  metric: uint32('route metric').optional(),
  mtu: mtu().optional(),
});

export const dhcpOptionsSchema = z.strictObject({
  routeMetric: uint32('route metric').optional(),
  ipv4: bool().optional(),
  ipv6: bool().optional(),
});

export const deviceSelectorSchema = z.strictObject({
  busPath: nonEmpty('busPath').optional(),
  hardwareAddr: nonEmpty('hardwareAddr').optional(),
  permanentAddr: nonEmpty('permanentAddr').optional(),
  pciID: nonEmpty('pciID').optional(),
  driver: nonEmpty('driver').optional(),
  physical: bool().optional(),
});

export const DEVICE_SELECTOR_FIELDS = Object.keys(deviceSelectorSchema.shape);

export const vlanSchema = z.strictObject({
  vlanId: intIn(1, 4094, 'VLAN ID'),
  addresses: z.array(ipOrCidr()).optional(),
  routes: z.array(routeSchema).optional(),
  dhcp: bool().optional(),
  dhcpOptions: dhcpOptionsSchema.optional(),
  mtu: mtu().optional(),
});

export const deviceSchema = z.strictObject({
  interface: interfaceName().optional(),
  /** One selector, or a list (a device matching any of them). */
  deviceSelector: z.union([deviceSelectorSchema, z.array(deviceSelectorSchema).min(1)]).optional(),
  addresses: z.array(ipOrCidr()).optional(),
  routes: z.array(routeSchema).optional(),
  vlans: z.array(vlanSchema).optional(),
  mtu: mtu().optional(),
  dhcp: bool().optional(),
  dhcpOptions: dhcpOptionsSchema.optional(),
  ignore: bool().optional(),
});

export const extraHostSchema = z.strictObject({
  ip: ipAddress(),
  aliases: z.array(dnsName('host alias')).min(1),
});

export const networkSchema = z.strictObject({
  hostname: hostname().optional(),
  interfaces: z.array(deviceSchema).optional(),
  nameservers: z.array(ipAddress()).optional(),
  searchDomains: z.array(dnsName('search domain')).optional(),
  disableSearchDomain: bool().optional(),
  extraHostEntries: z.array(extraHostSchema).optional(),
});

export const installSchema = z.strictObject({
  disk: checked((s) => (s.startsWith('/') && !absolutePathError(s) ? undefined : `${q(s)} is not an absolute device path: expected e.g. /dev/sda or /dev/disk/by-id/...`)).optional(),
  image: noSpaces('install image').optional(),
  wipe: bool().optional(),
  extraKernelArgs: z.array(kernelArg()).optional(),
});

export const timeSchema = z.strictObject({
  disabled: bool().optional(),
  servers: z.array(timeServer()).optional(),
  bootTimeout: goDuration().optional(),
});

export const machineFileSchema = z.strictObject({
  content: z.string(),
  permissions: fileMode().optional(),
  path: machineFilePath(),
  op: z.enum(['create', 'append', 'overwrite']),
});

export const featuresSchema = z.strictObject({
  rbac: bool().optional(),
  stableHostname: bool().optional(),
  apidCheckExtKeyUsage: bool().optional(),
});

export const MACHINE_TYPES = ['controlplane', 'worker'] as const;

export const machineSchema = z.strictObject({
  type: z.enum(MACHINE_TYPES),
  token: token('machine token'),
  ca: certificateAndKey(),
  certSANs: z.array(noSpaces('certificate SAN')).optional(),
  network: networkSchema.optional(),
  install: installSchema.optional(),
  time: timeSchema.optional(),
  sysctls: keyedMap(scalarString(), sysctlKeyError, 'sysctl key').optional(),
  sysfs: keyedMap(scalarString(), sysfsKeyError, 'sysfs key').optional(),
  files: z.array(machineFileSchema).optional(),
  env: keyedMap(scalarString(), envNameError, 'environment variable name').optional(),
  features: featuresSchema.optional(),
});

export const etcdSchema = z.strictObject({
  image: noSpaces('etcd image').optional(),
  ca: certificateAndKey().optional(),
  extraArgs: keyedMap(
    scalarString(),
    (k) => ((ETCD_RESERVED_ARGS as readonly string[]).includes(k) ? `Bronze sets --${k} itself; it cannot be overridden` : /^[a-z0-9][a-z0-9-]*$/.test(k) ? undefined : 'expected an etcd flag name without dashes, e.g. election-timeout'),
    'etcd argument',
  ).optional(),
  advertisedSubnets: z.array(subnetMatch()).optional(),
  listenSubnets: z.array(subnetMatch()).optional(),
});

export const discoverySchema = z.strictObject({
  enabled: bool().optional(),
  registries: z
    .strictObject({
      kubernetes: z.strictObject({ disabled: bool().optional() }).optional(),
      service: z.strictObject({ disabled: bool().optional(), endpoint: httpEndpoint().optional() }).optional(),
    })
    .optional(),
});

export const clusterSchema = z.strictObject({
  id: nonEmpty('cluster.id').optional(),
  secret: nonEmpty('cluster.secret').optional(),
  clusterName: checked((s) => (s.trim() === '' ? 'the cluster name must not be empty' : /[\s\p{Cc}]/u.test(s) ? `${q(s)} is not a valid cluster name: it must not contain white space or control characters` : undefined)).optional(),
  controlPlane: z.strictObject({ endpoint: httpsEndpoint() }).optional(),
  token: token('bootstrap token').optional(),
  ca: certificateAndKey().optional(),
  etcd: etcdSchema.optional(),
  discovery: discoverySchema.optional(),
});

export const v1alpha1Schema = z.strictObject({
  version: z.literal('v1alpha1'),
  debug: bool().optional(),
  persist: bool().optional(),
  machine: machineSchema,
  cluster: clusterSchema,
});

export type V1Alpha1Config = z.output<typeof v1alpha1Schema>;
export type MachineConfig = V1Alpha1Config['machine'];
export type ClusterConfig = V1Alpha1Config['cluster'];
export type MachineType = MachineConfig['type'];
export type NetworkConfig = z.output<typeof networkSchema>;
export type NetworkDevice = z.output<typeof deviceSchema>;
export type DeviceSelector = z.output<typeof deviceSelectorSchema>;
export type Vlan = z.output<typeof vlanSchema>;
export type Route = z.output<typeof routeSchema>;
export type DHCPOptions = z.output<typeof dhcpOptionsSchema>;
export type ExtraHost = z.output<typeof extraHostSchema>;
export type InstallConfig = z.output<typeof installSchema>;
export type TimeConfig = z.output<typeof timeSchema>;
export type MachineFile = z.output<typeof machineFileSchema>;
export type FeaturesConfig = z.output<typeof featuresSchema>;
export type EtcdConfig = z.output<typeof etcdSchema>;
export type DiscoveryConfig = z.output<typeof discoverySchema>;

/**
 * Talos fields Bronze does not implement, by object path ("[]" for any list item): an unknown
 * field found here is reported as unsupported rather than unknown.
 */
export const TALOS_ONLY_FIELDS: Readonly<Record<string, readonly string[]>> = {
  machine: [
    'acceptedCAs', 'controlPlane', 'kubelet', 'pods', 'disks', 'registries', 'systemDiskEncryption', 'udev', 'logging', 'kernel',
    'seccompProfiles', 'baseRuntimeSpecOverrides', 'nodeLabels', 'nodeAnnotations', 'nodeTaints',
  ],
  'machine.network': ['kubespan'],
  'machine.network.interfaces[]': ['bond', 'bridge', 'bridgePort', 'wireguard', 'vip', 'dummy', 'cidr'],
  'machine.network.interfaces[].vlans[]': ['vip', 'cidr'],
  'machine.install': ['diskSelector', 'legacyBIOSSupport', 'extensions', 'grubUseUKICmdline'],
  'machine.features': ['kubernetesTalosAPIAccess', 'diskQuotaSupport', 'kubePrism', 'hostDNS', 'imageCache', 'nodeAddressSortAlgorithm'],
  cluster: [
    'network', 'aescbcEncryptionSecret', 'secretboxEncryptionSecret', 'acceptedCAs', 'aggregatorCA', 'serviceAccount', 'apiServer',
    'controllerManager', 'proxy', 'scheduler', 'coreDNS', 'externalCloudProvider', 'extraManifests', 'extraManifestHeaders',
    'inlineManifests', 'adminKubeconfig', 'allowSchedulingOnControlPlanes',
  ],
  'cluster.controlPlane': ['localAPIServerPort'],
};

// ---------------------------------------------------------------------------------------------
// Helpers for checks on raw (not yet validated) data, shared by validate.ts and kinds.ts.
// ---------------------------------------------------------------------------------------------

export type PathSegment = string | number;
export type Obj = Record<string, unknown>;

/** Reports a problem at `path` (relative to the document). `at: 'key'` points at the key, not the value. */
export type Reporter = (path: readonly PathSegment[], message: string, at?: 'key' | 'value') => void;

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
