// IP address helpers for networkd: CIDR prefixes, netmasks (text ⇄ bytes is lib/ip.ts). Pure
// functions.

import { type Family, bytesToIp, familyOf, ipToBytes } from '../lib/ip.ts';

export { type Family, bytesToIp, familyOf, ipToBytes } from '../lib/ip.ts';

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
