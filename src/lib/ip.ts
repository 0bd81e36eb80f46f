// IP address helpers, one for the whole tree (networkd, the PKI, the contract's codecs): text ⇄
// bytes (IPv6 printed as RFC 5952 says, as `ip` does), CIDR prefixes, netmasks. Pure functions.
import net from 'node:net';

export type Family = 'inet4' | 'inet6';

/**
 * 4, 6 or 0, as net.isIP says, without net.isIPv6, whose first call compiles a large regular
 * expression (80-90 ms of machined's and apid's boot under QEMU/TCG): an IPv6 literal is what
 * the URL parser reads as an IPv6 host (one with a zone index still goes to net.isIPv6). The
 * same test is in grpc-js's resolver as bundled (image-builder/grpc-lazy-dns.ts).
 */
export function ipVersion(s: string): 0 | 4 | 6 {
  if (net.isIPv4(s)) return 4;
  if (/^[0-9A-Fa-f:.]+$/.test(s)) return s.includes(':') && URL.canParse(`http://[${s}]/`) ? 6 : 0;
  return s.includes('%') && net.isIPv6(s) ? 6 : 0;
}

export function familyOf(addr: string): Family {
  const v = ipVersion(addr);
  if (v === 4) return 'inet4';
  if (v === 6) return 'inet6';
  throw new Error(`not an IP address: ${JSON.stringify(addr)}`);
}

/** 4 or 16 bytes. Throws on anything that is not an IP address. */
export function ipToBytes(addr: string): Buffer {
  const v = ipVersion(addr);
  if (v === 4) return Buffer.from(addr.split('.').map(Number));
  if (v !== 6) throw new Error(`not an IP address: ${JSON.stringify(addr)}`);
  let text = addr.split('%')[0]!;
  const out = Buffer.alloc(16);
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const b = ipToBytes(v4[1]!);
    text = text.slice(0, -v4[1]!.length) + `${b.readUInt16BE(0).toString(16)}:${b.readUInt16BE(2).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

/** Text of 4 or 16 address bytes; throws on any other length. */
export function bytesToIp(b: Uint8Array): string {
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  if (b.length !== 16) throw new Error(`an IP address has 4 or 16 bytes, not ${b.length}`);
  const g: number[] = [];
  for (let i = 0; i < 16; i += 2) g.push((b[i]! << 8) | b[i + 1]!);
  // The longest run of two or more zero groups (the first on a tie) becomes '::'.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(':');
  if (best < 0) return hex(g);
  return `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
}

/**
 * Text of 4 or 16 address bytes as Go's net.IP.String() prints it: as bytesToIp, except that an
 * IPv4-mapped IPv6 address (::ffff:a.b.c.d) is printed as its IPv4 address.
 */
export function goIpString(b: Uint8Array): string {
  if (b.length === 16 && b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) return bytesToIp(b.subarray(12));
  return bytesToIp(b);
}

export interface Prefix {
  address: string;
  prefixLength: number;
  family: Family;
}

/** 'a.b.c.d/n' or 'x::y/n' (a bare address is a host prefix). */
export function parseCidr(text: string): Prefix {
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const family = familyOf(address);
  const max = family === 'inet4' ? 32 : 128;
  const lenText = slash < 0 ? String(max) : text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(lenText) || Number(lenText) > max) throw new Error(`bad prefix length in ${JSON.stringify(text)}`);
  return { address: bytesToIp(ipToBytes(address)), prefixLength: Number(lenText), family };
}

export function formatCidr(p: { address: string; prefixLength: number }): string {
  return `${p.address}/${p.prefixLength}`;
}

/** 255.255.255.0 → 24; throws on a non-contiguous mask. */
export function netmaskToPrefix(mask: string): number {
  const b = ipToBytes(mask);
  if (b.length !== 4) throw new Error(`bad netmask ${mask}`);
  const n = b.readUInt32BE(0);
  let bits = 0;
  while (bits < 32 && n & (0x80000000 >>> bits)) bits++;
  if (bits < 32 && (n << bits) >>> 0 !== 0) throw new Error(`netmask ${mask} is not contiguous`);
  return bits;
}

export function prefixToNetmask(len: number): string {
  const n = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
  return bytesToIp(Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]));
}

/** The network address of a prefix (host bits zeroed). */
export function networkOf(p: { address: string; prefixLength: number }): string {
  const b = ipToBytes(p.address);
  for (let bit = p.prefixLength; bit < b.length * 8; bit++) b[bit >> 3]! &= ~(0x80 >> (bit & 7));
  return bytesToIp(b);
}

/** The IPv4 broadcast address of a prefix. */
export function broadcastOf(p: { address: string; prefixLength: number }): string {
  const b = ipToBytes(p.address);
  for (let bit = p.prefixLength; bit < 32; bit++) b[bit >> 3]! |= 0x80 >> (bit & 7);
  return bytesToIp(b);
}

export function isLinkLocal(addr: string): boolean {
  const b = ipToBytes(addr);
  if (b.length === 4) return b[0] === 169 && b[1] === 254;
  return b[0] === 0xfe && (b[1]! & 0xc0) === 0x80;
}

export function isLoopback(addr: string): boolean {
  const b = ipToBytes(addr);
  if (b.length === 4) return b[0] === 127;
  return b.every((x, i) => x === (i === 15 ? 1 : 0));
}
