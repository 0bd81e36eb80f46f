// DHCPv4 packets (RFC 2131 on the BOOTP header of RFC 951, options of RFC 2132, long options
// split per RFC 3396, option overload into sname/file, classless routes of RFC 3442, search
// domains of RFC 3397), encoded and decoded by hand: the format is a fixed 236-byte header, a
// cookie and type-length-value options, and no maintained JavaScript library implements the
// client side (the npm DHCP packages are servers, unmaintained, or bind sockets themselves).
//
// Decoding never trusts the packet: every length is checked and anything inconsistent throws
// MalformedPacketError, which the client counts and drops.
import { bytesToIp, ipToBytes, netmaskToPrefix } from '../../lib/ip.ts';

export class MalformedPacketError extends Error {
  override name = 'MalformedPacketError';
}

function malformed(msg: string): never {
  throw new MalformedPacketError(msg);
}

export const BOOTREQUEST = 1;
export const BOOTREPLY = 2;
export const HTYPE_ETHER = 1;
export const MAGIC_COOKIE = 0x63825363;
export const FLAG_BROADCAST = 0x8000;
const HEADER_LEN = 236;
const MIN_LEN = HEADER_LEN + 4;
export const CLIENT_PORT = 68;
export const SERVER_PORT = 67;

export const MessageType = {
  DISCOVER: 1,
  OFFER: 2,
  REQUEST: 3,
  DECLINE: 4,
  ACK: 5,
  NAK: 6,
  RELEASE: 7,
  INFORM: 8,
} as const;
export type MessageTypeName = keyof typeof MessageType;

export function messageTypeName(n: number): string {
  return (Object.keys(MessageType) as MessageTypeName[]).find((k) => MessageType[k] === n) ?? `type ${n}`;
}

export const Opt = {
  PAD: 0,
  SUBNET_MASK: 1,
  ROUTER: 3,
  DNS: 6,
  HOSTNAME: 12,
  DOMAIN_NAME: 15,
  MTU: 26,
  BROADCAST: 28,
  NTP: 42,
  REQUESTED_IP: 50,
  LEASE_TIME: 51,
  OVERLOAD: 52,
  MESSAGE_TYPE: 53,
  SERVER_ID: 54,
  PARAMETER_REQUEST: 55,
  MESSAGE: 56,
  MAX_MESSAGE_SIZE: 57,
  RENEWAL_TIME: 58,
  REBINDING_TIME: 59,
  VENDOR_CLASS: 60,
  CLIENT_ID: 61,
  DOMAIN_SEARCH: 119,
  CLASSLESS_ROUTES: 121,
  END: 255,
} as const;

export interface DhcpPacket {
  op: number;
  htype: number;
  hlen: number;
  hops: number;
  xid: number;
  secs: number;
  flags: number;
  ciaddr: string;
  yiaddr: string;
  siaddr: string;
  giaddr: string;
  /** The hardware address, hlen bytes, as aa:bb:cc:dd:ee:ff. */
  chaddr: string;
  sname: string;
  file: string;
  /** Option code → value (repeated codes concatenated, RFC 3396). */
  options: Map<number, Buffer>;
}

// ---------------------------------------------------------------------------------------------
// Decoding.

function cstr(b: Buffer): string {
  const nul = b.indexOf(0);
  return b.subarray(0, nul < 0 ? b.length : nul).toString('latin1');
}

/** Parses an options area into out; returns the overload value when option 52 is present. */
function parseOptionArea(area: Buffer, out: Map<number, Buffer>, where: string): number | undefined {
  let overload: number | undefined;
  let off = 0;
  while (off < area.length) {
    const code = area[off]!;
    if (code === Opt.PAD) {
      off++;
      continue;
    }
    if (code === Opt.END) return overload;
    if (off + 1 >= area.length) malformed(`${where}: option ${code} has no length byte`);
    const len = area[off + 1]!;
    if (off + 2 + len > area.length) malformed(`${where}: option ${code} length ${len} runs past the end`);
    const value = area.subarray(off + 2, off + 2 + len);
    const prev = out.get(code);
    out.set(code, prev ? Buffer.concat([prev, value]) : Buffer.from(value));
    if (code === Opt.OVERLOAD) {
      if (len !== 1) malformed(`${where}: option overload length ${len}`);
      overload = value[0];
    }
    off += 2 + len;
  }
  // RFC 2131 asks for an END option; many servers pad instead, so running out is accepted.
  return overload;
}

export function decodePacket(buf: Buffer): DhcpPacket {
  if (buf.length < MIN_LEN) malformed(`DHCP packet of ${buf.length} bytes, shorter than ${MIN_LEN}`);
  if (buf.readUInt32BE(HEADER_LEN) !== MAGIC_COOKIE) malformed('no DHCP magic cookie');
  const hlen = buf[2]!;
  if (hlen > 16) malformed(`hardware address length ${hlen}`);
  const options = new Map<number, Buffer>();
  const overload = parseOptionArea(buf.subarray(MIN_LEN), options, 'options');
  const sname = buf.subarray(44, 108);
  const file = buf.subarray(108, 236);
  if (overload !== undefined) {
    if (overload < 1 || overload > 3) malformed(`option overload value ${overload}`);
    // RFC 2131 4.1: the file field is read before sname.
    if (overload & 1) parseOptionArea(file, options, 'file field');
    if (overload & 2) parseOptionArea(sname, options, 'sname field');
  }
  return {
    op: buf[0]!,
    htype: buf[1]!,
    hlen,
    hops: buf[3]!,
    xid: buf.readUInt32BE(4),
    secs: buf.readUInt16BE(8),
    flags: buf.readUInt16BE(10),
    ciaddr: bytesToIp(buf.subarray(12, 16)),
    yiaddr: bytesToIp(buf.subarray(16, 20)),
    siaddr: bytesToIp(buf.subarray(20, 24)),
    giaddr: bytesToIp(buf.subarray(24, 28)),
    chaddr: [...buf.subarray(28, 28 + hlen)].map((x) => x.toString(16).padStart(2, '0')).join(':'),
    sname: overload !== undefined && overload & 2 ? '' : cstr(sname),
    file: overload !== undefined && overload & 1 ? '' : cstr(file),
    options,
  };
}

// ---------------------------------------------------------------------------------------------
// Options, interpreted.

export interface ClasslessRoute {
  /** 'a.b.c.d/n'. */
  destination: string;
  /** '0.0.0.0' for an on-link route. */
  router: string;
}

/** What a client uses from a server's answer. Absent options are undefined (lists: empty). */
export interface DhcpOptions {
  messageType?: number;
  serverId?: string;
  subnetMask?: string;
  prefixLength?: number;
  routers: string[];
  dnsServers: string[];
  domainName?: string;
  hostname?: string;
  mtu?: number;
  ntpServers: string[];
  searchDomains: string[];
  classlessRoutes: ClasslessRoute[];
  broadcast?: string;
  /** Seconds. */
  leaseTime?: number;
  renewalTime?: number;
  rebindingTime?: number;
  message?: string;
}

function ip1(v: Buffer | undefined, code: number): string | undefined {
  if (v === undefined) return undefined;
  if (v.length !== 4) malformed(`option ${code}: ${v.length} bytes, want 4`);
  return bytesToIp(v);
}

function ipList(v: Buffer | undefined, code: number): string[] {
  if (v === undefined) return [];
  if (v.length === 0 || v.length % 4 !== 0) malformed(`option ${code}: ${v.length} bytes, not a list of addresses`);
  const out: string[] = [];
  for (let i = 0; i < v.length; i += 4) out.push(bytesToIp(v.subarray(i, i + 4)));
  return out;
}

function u32opt(v: Buffer | undefined, code: number): number | undefined {
  if (v === undefined) return undefined;
  if (v.length !== 4) malformed(`option ${code}: ${v.length} bytes, want 4`);
  return v.readUInt32BE(0);
}

function text(v: Buffer | undefined): string | undefined {
  if (v === undefined) return undefined;
  const s = cstr(v).trim();
  return s === '' ? undefined : s;
}

/** RFC 1035 names with compression pointers (RFC 3397), as option 119 carries them. */
export function decodeDomainSearch(v: Buffer): string[] {
  const out: string[] = [];
  let off = 0;
  while (off < v.length) {
    const labels: string[] = [];
    let p = off;
    let jumped = false;
    let hops = 0;
    for (;;) {
      if (p >= v.length) malformed('domain search: name runs past the end');
      const len = v[p]!;
      if (len === 0) {
        if (!jumped) off = p + 1;
        break;
      }
      if ((len & 0xc0) === 0xc0) {
        if (p + 1 >= v.length) malformed('domain search: truncated pointer');
        const target = ((len & 0x3f) << 8) | v[p + 1]!;
        if (target >= p || ++hops > 64) malformed('domain search: pointer loop');
        if (!jumped) off = p + 2;
        jumped = true;
        p = target;
        continue;
      }
      if (len > 63) malformed(`domain search: label length ${len}`);
      if (p + 1 + len > v.length) malformed('domain search: label runs past the end');
      labels.push(v.subarray(p + 1, p + 1 + len).toString('latin1'));
      p += 1 + len;
    }
    if (labels.length > 0) out.push(labels.join('.'));
  }
  return out;
}

export function decodeClasslessRoutes(v: Buffer): ClasslessRoute[] {
  const out: ClasslessRoute[] = [];
  let off = 0;
  while (off < v.length) {
    const width = v[off]!;
    if (width > 32) malformed(`classless route: prefix length ${width}`);
    const sig = Math.ceil(width / 8);
    if (off + 1 + sig + 4 > v.length) malformed('classless route: truncated');
    const dst = Buffer.alloc(4);
    v.copy(dst, 0, off + 1, off + 1 + sig);
    out.push({ destination: `${bytesToIp(dst)}/${width}`, router: bytesToIp(v.subarray(off + 1 + sig, off + 5 + sig)) });
    off += 5 + sig;
  }
  return out;
}

export function interpretOptions(o: Map<number, Buffer>): DhcpOptions {
  const mt = o.get(Opt.MESSAGE_TYPE);
  if (mt !== undefined && mt.length !== 1) malformed(`message type option of ${mt.length} bytes`);
  const mtuBuf = o.get(Opt.MTU);
  if (mtuBuf !== undefined && mtuBuf.length !== 2) malformed(`option 26: ${mtuBuf.length} bytes, want 2`);
  const subnetMask = ip1(o.get(Opt.SUBNET_MASK), Opt.SUBNET_MASK);
  let prefixLength: number | undefined;
  if (subnetMask !== undefined) {
    try {
      prefixLength = netmaskToPrefix(subnetMask);
    } catch {
      malformed(`subnet mask ${subnetMask} is not contiguous`);
    }
  }
  const search = o.get(Opt.DOMAIN_SEARCH);
  const classless = o.get(Opt.CLASSLESS_ROUTES);
  const out: DhcpOptions = {
    routers: ipList(o.get(Opt.ROUTER), Opt.ROUTER),
    dnsServers: ipList(o.get(Opt.DNS), Opt.DNS),
    ntpServers: ipList(o.get(Opt.NTP), Opt.NTP),
    searchDomains: search ? decodeDomainSearch(search) : [],
    classlessRoutes: classless ? decodeClasslessRoutes(classless) : [],
  };
  if (mt !== undefined) out.messageType = mt[0]!;
  const serverId = ip1(o.get(Opt.SERVER_ID), Opt.SERVER_ID);
  if (serverId !== undefined) out.serverId = serverId;
  if (subnetMask !== undefined) {
    out.subnetMask = subnetMask;
    out.prefixLength = prefixLength!;
  }
  const domain = text(o.get(Opt.DOMAIN_NAME));
  if (domain !== undefined) out.domainName = domain.replace(/\.$/, '');
  const host = text(o.get(Opt.HOSTNAME));
  if (host !== undefined) out.hostname = host;
  if (mtuBuf !== undefined) out.mtu = mtuBuf.readUInt16BE(0);
  const brd = ip1(o.get(Opt.BROADCAST), Opt.BROADCAST);
  if (brd !== undefined) out.broadcast = brd;
  const lease = u32opt(o.get(Opt.LEASE_TIME), Opt.LEASE_TIME);
  if (lease !== undefined) out.leaseTime = lease;
  const t1 = u32opt(o.get(Opt.RENEWAL_TIME), Opt.RENEWAL_TIME);
  if (t1 !== undefined) out.renewalTime = t1;
  const t2 = u32opt(o.get(Opt.REBINDING_TIME), Opt.REBINDING_TIME);
  if (t2 !== undefined) out.rebindingTime = t2;
  const msg = text(o.get(Opt.MESSAGE));
  if (msg !== undefined) out.message = msg;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Encoding.

export interface OutgoingPacket {
  op?: number;
  xid: number;
  secs?: number;
  broadcast?: boolean;
  ciaddr?: string;
  yiaddr?: string;
  siaddr?: string;
  giaddr?: string;
  /** aa:bb:cc:dd:ee:ff */
  chaddr: string;
  /** In order; values longer than 255 bytes are split (RFC 3396). */
  options: Array<[code: number, value: Buffer]>;
}

export function macBytes(mac: string): Buffer {
  const parts = mac.split(':');
  if (parts.length < 1 || parts.length > 16 || parts.some((p) => !/^[0-9a-fA-F]{1,2}$/.test(p))) throw new Error(`bad hardware address ${mac}`);
  return Buffer.from(parts.map((p) => parseInt(p, 16)));
}

export function encodePacket(p: OutgoingPacket): Buffer {
  const hw = macBytes(p.chaddr);
  const opts: Buffer[] = [];
  for (const [code, value] of p.options) {
    for (let i = 0; i < value.length || i === 0; i += 255) {
      const chunk = value.subarray(i, i + 255);
      opts.push(Buffer.from([code, chunk.length]), chunk);
      if (value.length === 0) break;
    }
  }
  opts.push(Buffer.from([Opt.END]));
  const body = Buffer.concat(opts);
  // Pad to the 300-byte BOOTP minimum some relays and servers still insist on.
  const out = Buffer.alloc(Math.max(MIN_LEN + body.length, 300));
  out[0] = p.op ?? BOOTREQUEST;
  out[1] = HTYPE_ETHER;
  out[2] = hw.length;
  out.writeUInt32BE(p.xid >>> 0, 4);
  out.writeUInt16BE(p.secs ?? 0, 8);
  out.writeUInt16BE(p.broadcast ? FLAG_BROADCAST : 0, 10);
  ipToBytes(p.ciaddr ?? '0.0.0.0').copy(out, 12);
  ipToBytes(p.yiaddr ?? '0.0.0.0').copy(out, 16);
  ipToBytes(p.siaddr ?? '0.0.0.0').copy(out, 20);
  ipToBytes(p.giaddr ?? '0.0.0.0').copy(out, 24);
  hw.copy(out, 28);
  out.writeUInt32BE(MAGIC_COOKIE, HEADER_LEN);
  body.copy(out, MIN_LEN);
  return out;
}

export const opt = {
  u8: (code: number, v: number): [number, Buffer] => [code, Buffer.from([v])],
  u16: (code: number, v: number): [number, Buffer] => {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(v);
    return [code, b];
  },
  u32: (code: number, v: number): [number, Buffer] => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(v >>> 0);
    return [code, b];
  },
  ip: (code: number, v: string): [number, Buffer] => [code, ipToBytes(v)],
  ips: (code: number, v: string[]): [number, Buffer] => [code, Buffer.concat(v.map((a) => ipToBytes(a)))],
  str: (code: number, v: string): [number, Buffer] => [code, Buffer.from(v, 'latin1')],
  bytes: (code: number, v: number[] | Buffer): [number, Buffer] => [code, Buffer.from(v)],
};

/** RFC 3397 encoding (no compression), for servers in tests. */
export function encodeDomainSearch(domains: string[]): Buffer {
  const parts: Buffer[] = [];
  for (const d of domains) {
    for (const label of d.split('.').filter(Boolean)) parts.push(Buffer.from([label.length]), Buffer.from(label, 'latin1'));
    parts.push(Buffer.from([0]));
  }
  return Buffer.concat(parts);
}

/** RFC 3442 encoding, for servers in tests. */
export function encodeClasslessRoutes(routes: ClasslessRoute[]): Buffer {
  const parts: Buffer[] = [];
  for (const r of routes) {
    const [addr, lenText] = r.destination.split('/');
    const width = Number(lenText);
    const sig = Math.ceil(width / 8);
    parts.push(Buffer.from([width]), ipToBytes(addr!).subarray(0, sig), ipToBytes(r.router));
  }
  return Buffer.concat(parts);
}
