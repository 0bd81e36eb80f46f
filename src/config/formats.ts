// Pure format checks of machine configuration values: each returns undefined when the value is
// fine, else the reason it is not (IP addresses and prefixes, host and DNS names, interface names,
// Go durations, tokens, sysctl/sysfs/env keys, paths, base64 PEM certificates and keys). The zod
// field builders (fields.ts) and the checks across fields (validate.ts, kinds) use them.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { isIP } from 'node:net';
import { bytesToIp, ipToBytes } from '../lib/ip.ts';
import { fromBase64Pem, normalizePrivateKeyPem, pemDecode } from '../pki/pem.ts';

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
  if (!isIP(ip) || ip.includes('%')) return undefined;
  return [...ipToBytes(ip)];
}

export function ipFamily(ip: string): 4 | 6 | undefined {
  const f = isIP(ip);
  return f === 4 || f === 6 ? f : undefined;
}

export function familyName(f: 4 | 6): string {
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
  return `${bytesToIp(Uint8Array.from(bytes))}/${p.bits}`;
}

export function isUnspecified(bytes: number[]): boolean {
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

export { goDurationMs as parseGoDuration } from '../lib/duration.ts';

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

/**
 * Why `text` is not one PEM certificate, or one private key (a label of pki/pem.ts
 * PRIVATE_KEY_LABELS, read as Node will once normalizePrivateKeyPem has made it PKCS#8), or
 * undefined: "no valid PEM <what>", with the PEM decoder's reason when it has one.
 */
export function pemError(text: string, what: 'certificate' | 'private key'): string | undefined {
  try {
    if (what === 'certificate') {
      pemDecode(text, ['CERTIFICATE']);
      new X509Certificate(text);
    } else {
      createPrivateKey(normalizePrivateKeyPem(text));
    }
  } catch (err) {
    const reason = (err as Error).message;
    return `no valid PEM ${what}${/PEM/.test(reason) ? ` (${reason})` : ''}`;
  }
  return undefined;
}

export function base64PemError(b64: string, what: 'certificate' | 'private key'): string | undefined {
  let pem: string;
  try {
    pem = fromBase64Pem(b64);
  } catch {
    return `not base64: expected the base64 encoding of a PEM ${what}`;
  }
  const why = pemError(pem, what);
  return why && `the base64 decodes to ${why}`;
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
