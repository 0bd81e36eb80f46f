// IP address text ⇄ bytes (IPv6 printed as RFC 5952 says, as `ip` does): one parser for the
// whole tree (networkd, the PKI, the config). Pure functions.
import net from 'node:net';

export type Family = 'inet4' | 'inet6';

export function familyOf(addr: string): Family {
  if (net.isIPv4(addr)) return 'inet4';
  if (net.isIPv6(addr)) return 'inet6';
  throw new Error(`not an IP address: ${JSON.stringify(addr)}`);
}

/** 4 or 16 bytes. Throws on anything that is not an IP address. */
export function ipToBytes(addr: string): Buffer {
  if (net.isIPv4(addr)) return Buffer.from(addr.split('.').map(Number));
  if (!net.isIPv6(addr)) throw new Error(`not an IP address: ${JSON.stringify(addr)}`);
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
