// The rtnetlink wire format: nlmsghdr, ifinfomsg, ifaddrmsg, rtmsg and rtattr (nested
// included), encoded and decoded by hand. No maintained JavaScript library speaks rtnetlink
// (the npm packages that tried are unmaintained and wrap native addons), and the subset
// networkd needs is small and fixed by the kernel ABI (include/uapi/linux/{netlink,rtnetlink,
// if_link,if_addr}.h). Pure functions over Buffers, no I/O: rtnl.ts does the talking.
//
// Decoding never trusts a length: every read is bounds-checked and anything inconsistent
// throws MalformedMessageError, which callers count and drop.
import { bytesToIp, type Family, ipToBytes, parseCidr } from '../lib/ip.ts';

export class MalformedMessageError extends Error {
  override name = 'MalformedMessageError';
}

function malformed(msg: string): never {
  throw new MalformedMessageError(msg);
}

// ---------------------------------------------------------------------------------------------
// Constants (values from the kernel's uapi headers).

export const NETLINK_ROUTE = 0;
export const SOL_NETLINK = 270;
export const NETLINK_CAP_ACK = 10;
export const NETLINK_EXT_ACK = 11;
export const NETLINK_GET_STRICT_CHK = 12;

export const NLMSG = { NOOP: 1, ERROR: 2, DONE: 3, OVERRUN: 4 } as const;
export const NLM_F = {
  REQUEST: 0x1,
  MULTI: 0x2,
  ACK: 0x4,
  ECHO: 0x8,
  DUMP_INTR: 0x10,
  DUMP: 0x300,
  REPLACE: 0x100,
  EXCL: 0x200,
  CREATE: 0x400,
  APPEND: 0x800,
  /** In NLMSG_ERROR: the request was not echoed in full. */
  CAPPED: 0x100,
  /** In NLMSG_ERROR: extended-ack attributes follow. */
  ACK_TLVS: 0x200,
} as const;
export const NLMSGERR_ATTR_MSG = 1;

export const RTM = {
  NEWLINK: 16,
  DELLINK: 17,
  GETLINK: 18,
  SETLINK: 19,
  NEWADDR: 20,
  DELADDR: 21,
  GETADDR: 22,
  NEWROUTE: 24,
  DELROUTE: 25,
  GETROUTE: 26,
} as const;

/** Multicast groups as bind() bit masks. */
export const RTMGRP = {
  LINK: 0x1,
  IPV4_IFADDR: 0x10,
  IPV4_ROUTE: 0x40,
  IPV6_IFADDR: 0x100,
  IPV6_ROUTE: 0x400,
} as const;

export const IFF = {
  UP: 0x1,
  BROADCAST: 0x2,
  LOOPBACK: 0x8,
  POINTOPOINT: 0x10,
  RUNNING: 0x40,
  NOARP: 0x80,
  MULTICAST: 0x1000,
  LOWER_UP: 0x10000,
  DORMANT: 0x20000,
} as const;

export const IFLA = {
  ADDRESS: 1,
  BROADCAST: 2,
  IFNAME: 3,
  MTU: 4,
  LINK: 5,
  QDISC: 6,
  MASTER: 10,
  IFALIAS: 20,
  OPERSTATE: 16,
  LINKINFO: 18,
  PROP_LIST: 52,
  ALT_IFNAME: 53,
  PERM_ADDRESS: 54,
} as const;
export const IFLA_INFO = { KIND: 1, DATA: 2, SLAVE_KIND: 4 } as const;
export const IFLA_VLAN = { ID: 1, PROTOCOL: 5 } as const;
export const IFLA_MACVLAN = { MODE: 1 } as const;

export const IFA = { ADDRESS: 1, LOCAL: 2, LABEL: 3, BROADCAST: 4, CACHEINFO: 6, FLAGS: 8, RT_PRIORITY: 9 } as const;
export const IFA_F = {
  SECONDARY: 0x1,
  NODAD: 0x2,
  DADFAILED: 0x8,
  DEPRECATED: 0x20,
  TENTATIVE: 0x40,
  PERMANENT: 0x80,
  NOPREFIXROUTE: 0x200,
} as const;
const INFINITY_LIFE = 0xffffffff;

export const RTA = { DST: 1, SRC: 2, IIF: 3, OIF: 4, GATEWAY: 5, PRIORITY: 6, PREFSRC: 7, METRICS: 8, TABLE: 15 } as const;
export const RTAX_MTU = 2;
export const RT_TABLE = { UNSPEC: 0, MAIN: 254, LOCAL: 255 } as const;
export const RTPROT = { UNSPEC: 0, KERNEL: 2, BOOT: 3, STATIC: 4, RA: 9, DHCP: 16 } as const;
export const RT_SCOPE = { UNIVERSE: 0, SITE: 200, LINK: 253, HOST: 254, NOWHERE: 255 } as const;
export const RTN = { UNICAST: 1, LOCAL: 2, BROADCAST: 3, ANYCAST: 4, MULTICAST: 5, BLACKHOLE: 6, UNREACHABLE: 7, PROHIBIT: 8 } as const;

export const AF_UNSPEC = 0;
export const AF_INET = 2;
export const AF_INET6 = 10;

const ETH_P_8021Q = 0x8100;
const ETH_P_8021AD = 0x88a8;

export const ARPHRD_NAMES: Record<number, string> = {
  1: 'ether',
  24: 'ieee1394',
  32: 'infiniband',
  512: 'ppp',
  768: 'tunnel',
  769: 'tunnel6',
  772: 'loopback',
  776: 'sit',
  778: 'gre',
  65534: 'none',
};
export const ARPHRD_ETHER = 1;
export const ARPHRD_LOOPBACK = 772;

const OPER_STATES = ['unknown', 'notPresent', 'down', 'lowerLayerDown', 'testing', 'dormant', 'up'] as const;
export type OperState = (typeof OPER_STATES)[number];

const SCOPE_NAMES: Record<number, string> = { 0: 'global', 200: 'site', 253: 'link', 254: 'host', 255: 'nowhere' };
const PROTO_NAMES: Record<number, string> = { 0: 'unspec', 1: 'redirect', 2: 'kernel', 3: 'boot', 4: 'static', 9: 'ra', 16: 'dhcp' };
const RTN_NAMES: Record<number, string> = {
  0: 'unspec',
  1: 'unicast',
  2: 'local',
  3: 'broadcast',
  4: 'anycast',
  5: 'multicast',
  6: 'blackhole',
  7: 'unreachable',
  8: 'prohibit',
  9: 'throw',
  10: 'nat',
};

export function scopeName(n: number): string {
  return SCOPE_NAMES[n] ?? String(n);
}
export function protocolName(n: number): string {
  return PROTO_NAMES[n] ?? String(n);
}
export function routeTypeName(n: number): string {
  return RTN_NAMES[n] ?? String(n);
}

export { errnoName } from '../lib/sys.ts';

// ---------------------------------------------------------------------------------------------
// Framing.

export const NLMSG_HDRLEN = 16;
const align4 = (n: number) => (n + 3) & ~3;

export interface NlHeader {
  type: number;
  flags: number;
  seq: number;
  pid: number;
}

export interface NlMessage extends NlHeader {
  /** The bytes after the header (the message's own length, alignment padding excluded). */
  payload: Buffer;
}

export function encodeMessage(h: NlHeader, body: Buffer): Buffer {
  const len = NLMSG_HDRLEN + body.length;
  const out = Buffer.alloc(align4(len));
  out.writeUInt32LE(len, 0);
  out.writeUInt16LE(h.type, 4);
  out.writeUInt16LE(h.flags, 6);
  out.writeUInt32LE(h.seq >>> 0, 8);
  out.writeUInt32LE(h.pid >>> 0, 12);
  body.copy(out, NLMSG_HDRLEN);
  return out;
}

/** The messages of one datagram. Throws MalformedMessageError on broken framing. */
export function splitMessages(buf: Buffer): NlMessage[] {
  const out: NlMessage[] = [];
  let off = 0;
  while (off < buf.length) {
    if (buf.length - off < NLMSG_HDRLEN) malformed(`netlink: ${buf.length - off} trailing bytes, shorter than a header`);
    const len = buf.readUInt32LE(off);
    if (len < NLMSG_HDRLEN || len > buf.length - off) malformed(`netlink: message length ${len} at offset ${off} of ${buf.length}`);
    out.push({
      type: buf.readUInt16LE(off + 4),
      flags: buf.readUInt16LE(off + 6),
      seq: buf.readUInt32LE(off + 8),
      pid: buf.readUInt32LE(off + 12),
      payload: buf.subarray(off + NLMSG_HDRLEN, off + len),
    });
    off += align4(len);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Attributes.

export interface Attr {
  type: number;
  /** Bytes, or nested attributes (NLA_F_NESTED is set on the way out). */
  value: Buffer | Attr[];
}

const NLA_F_NESTED = 0x8000;
const NLA_TYPE_MASK = 0x3fff;

export function encodeAttrs(attrs: readonly Attr[]): Buffer {
  const parts: Buffer[] = [];
  for (const a of attrs) {
    const nested = Array.isArray(a.value);
    const value = nested ? encodeAttrs(a.value as Attr[]) : (a.value as Buffer);
    const len = 4 + value.length;
    const b = Buffer.alloc(align4(len));
    b.writeUInt16LE(len, 0);
    b.writeUInt16LE(a.type | (nested ? NLA_F_NESTED : 0), 2);
    value.copy(b, 4);
    parts.push(b);
  }
  return Buffer.concat(parts);
}

/** type → value (flags masked off; a repeated type keeps the last). */
export function parseAttrs(buf: Buffer): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  for (const [type, value] of attrList(buf)) out.set(type, value);
  return out;
}

/** Every attribute in order, repeated types included (flags masked off). */
export function attrList(buf: Buffer): Array<[number, Buffer]> {
  const out: Array<[number, Buffer]> = [];
  let off = 0;
  while (off + 4 <= buf.length) {
    const len = buf.readUInt16LE(off);
    const type = buf.readUInt16LE(off + 2) & NLA_TYPE_MASK;
    if (len < 4 || len > buf.length - off) malformed(`rtattr: length ${len} at offset ${off} of ${buf.length}`);
    out.push([type, buf.subarray(off + 4, off + len)]);
    off += align4(len);
  }
  return out;
}

export const attr = {
  u8: (type: number, v: number): Attr => ({ type, value: Buffer.from([v & 0xff]) }),
  u16: (type: number, v: number): Attr => {
    const b = Buffer.alloc(2);
    b.writeUInt16LE(v);
    return { type, value: b };
  },
  u16be: (type: number, v: number): Attr => {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(v);
    return { type, value: b };
  },
  u32: (type: number, v: number): Attr => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v >>> 0);
    return { type, value: b };
  },
  str: (type: number, v: string): Attr => ({ type, value: Buffer.concat([Buffer.from(v), Buffer.alloc(1)]) }),
  ip: (type: number, v: string): Attr => ({ type, value: ipToBytes(v) }),
  bytes: (type: number, v: Buffer): Attr => ({ type, value: v }),
  nested: (type: number, v: Attr[]): Attr => ({ type, value: v }),
};

function u8(b: Buffer | undefined, what: string): number | undefined {
  if (b === undefined) return undefined;
  if (b.length < 1) malformed(`${what}: empty`);
  return b.readUInt8(0);
}
function u16(b: Buffer | undefined, what: string): number | undefined {
  if (b === undefined) return undefined;
  if (b.length < 2) malformed(`${what}: ${b.length} bytes, want 2`);
  return b.readUInt16LE(0);
}
function u32(b: Buffer | undefined, what: string): number | undefined {
  if (b === undefined) return undefined;
  if (b.length < 4) malformed(`${what}: ${b.length} bytes, want 4`);
  return b.readUInt32LE(0);
}
function str(b: Buffer | undefined): string | undefined {
  if (b === undefined) return undefined;
  const nul = b.indexOf(0);
  return b.subarray(0, nul < 0 ? b.length : nul).toString('utf8');
}
function ipOf(b: Buffer | undefined, family: number, what: string): string | undefined {
  if (b === undefined) return undefined;
  const want = family === AF_INET ? 4 : family === AF_INET6 ? 16 : b.length;
  if (b.length !== want || (want !== 4 && want !== 16)) malformed(`${what}: ${b.length} bytes for family ${family}`);
  return bytesToIp(b);
}
export function macOf(b: Buffer | undefined): string | undefined {
  if (b === undefined) return undefined;
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join(':');
}

export function familyName(af: number): Family {
  if (af === AF_INET) return 'inet4';
  if (af === AF_INET6) return 'inet6';
  malformed(`address family ${af}`);
}
export function afOf(family: Family): number {
  return family === 'inet4' ? AF_INET : AF_INET6;
}

// ---------------------------------------------------------------------------------------------
// NLMSG_ERROR.

export interface NlError {
  /** 0 for an ack, else a positive errno. */
  errno: number;
  /** The kernel's extended-ack message, when it gave one. */
  message?: string;
}

export function decodeError(m: NlMessage): NlError {
  const p = m.payload;
  if (p.length < 4) malformed(`NLMSG_ERROR: ${p.length} bytes`);
  const errno = Math.abs(p.readInt32LE(0));
  const out: NlError = { errno };
  if (m.flags & NLM_F.ACK_TLVS && p.length >= 4 + NLMSG_HDRLEN) {
    const origLen = p.readUInt32LE(4);
    const skip = m.flags & NLM_F.CAPPED ? NLMSG_HDRLEN : align4(origLen);
    if (4 + skip <= p.length) {
      const tlvs = parseAttrs(p.subarray(4 + skip));
      const msg = str(tlvs.get(NLMSGERR_ATTR_MSG));
      if (msg) out.message = msg;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Links: ifinfomsg { u8 family, u8 pad, u16 type, i32 index, u32 flags, u32 change }.

const IFINFOMSG_LEN = 16;

export interface Link {
  index: number;
  name: string;
  /** ARPHRD_* number and its name ('ether', 'loopback', ...). */
  type: number;
  typeName: string;
  mac: string;
  broadcast: string;
  permanentMac?: string;
  mtu: number;
  flags: number;
  up: boolean;
  running: boolean;
  lowerUp: boolean;
  loopback: boolean;
  operState: OperState;
  /** IFLA_INFO_KIND: 'vlan', 'veth', 'bridge', ...; undefined for plain hardware. */
  kind?: string;
  slaveKind?: string;
  /** Index of the bond/bridge this link is enslaved to. */
  master?: number;
  /** IFLA_LINK: the lower link (a VLAN's parent, a veth's peer). */
  parent?: number;
  vlan?: { id: number; protocol: string };
  /** IFLA_QDISC: the queueing discipline ('pfifo_fast', 'noqueue', ...). */
  qdisc?: string;
  /** IFLA_IFALIAS: the alias an administrator gave the link. */
  alias?: string;
  /** IFLA_ALT_IFNAME entries of IFLA_PROP_LIST. */
  altNames?: string[];
}

export function ifinfomsg(family: number, index: number, flags = 0, change = 0, type = 0): Buffer {
  const b = Buffer.alloc(IFINFOMSG_LEN);
  b.writeUInt8(family, 0);
  b.writeUInt16LE(type, 2);
  b.writeInt32LE(index, 4);
  b.writeUInt32LE(flags >>> 0, 8);
  b.writeUInt32LE(change >>> 0, 12);
  return b;
}

export function decodeLink(m: NlMessage): Link {
  const p = m.payload;
  if (p.length < IFINFOMSG_LEN) malformed(`ifinfomsg: ${p.length} bytes`);
  const type = p.readUInt16LE(2);
  const index = p.readInt32LE(4);
  const flags = p.readUInt32LE(8);
  const a = parseAttrs(p.subarray(IFINFOMSG_LEN));
  const name = str(a.get(IFLA.IFNAME));
  if (name === undefined) malformed(`link ${index}: no IFLA_IFNAME`);
  const oper = u8(a.get(IFLA.OPERSTATE), 'IFLA_OPERSTATE') ?? 0;
  const link: Link = {
    index,
    name,
    type,
    typeName: ARPHRD_NAMES[type] ?? String(type),
    mac: macOf(a.get(IFLA.ADDRESS)) ?? '',
    broadcast: macOf(a.get(IFLA.BROADCAST)) ?? '',
    mtu: u32(a.get(IFLA.MTU), 'IFLA_MTU') ?? 0,
    flags,
    up: (flags & IFF.UP) !== 0,
    running: (flags & IFF.RUNNING) !== 0,
    lowerUp: (flags & IFF.LOWER_UP) !== 0,
    loopback: (flags & IFF.LOOPBACK) !== 0,
    operState: OPER_STATES[oper] ?? 'unknown',
  };
  const perm = macOf(a.get(IFLA.PERM_ADDRESS));
  if (perm) link.permanentMac = perm;
  const qdisc = str(a.get(IFLA.QDISC));
  if (qdisc) link.qdisc = qdisc;
  const alias = str(a.get(IFLA.IFALIAS));
  if (alias) link.alias = alias;
  const props = a.get(IFLA.PROP_LIST);
  if (props) {
    const names = attrList(props)
      .filter(([t]) => t === IFLA.ALT_IFNAME)
      .map(([, v]) => str(v)!)
      .filter(Boolean);
    if (names.length > 0) link.altNames = names;
  }
  const master = u32(a.get(IFLA.MASTER), 'IFLA_MASTER');
  if (master) link.master = master;
  const parent = u32(a.get(IFLA.LINK), 'IFLA_LINK');
  if (parent !== undefined && parent !== index) link.parent = parent;
  const info = a.get(IFLA.LINKINFO);
  if (info) {
    const i = parseAttrs(info);
    const kind = str(i.get(IFLA_INFO.KIND));
    if (kind) link.kind = kind;
    const slaveKind = str(i.get(IFLA_INFO.SLAVE_KIND));
    if (slaveKind) link.slaveKind = slaveKind;
    const data = i.get(IFLA_INFO.DATA);
    if (kind === 'vlan' && data) {
      const d = parseAttrs(data);
      const id = u16(d.get(IFLA_VLAN.ID), 'IFLA_VLAN_ID');
      const protoBuf = d.get(IFLA_VLAN.PROTOCOL);
      if (protoBuf && protoBuf.length < 2) malformed('IFLA_VLAN_PROTOCOL: short');
      const proto = protoBuf ? protoBuf.readUInt16BE(0) : ETH_P_8021Q;
      if (id !== undefined) {
        link.vlan = {
          id,
          protocol: proto === ETH_P_8021Q ? '802.1Q' : proto === ETH_P_8021AD ? '802.1ad' : `0x${proto.toString(16)}`,
        };
      }
    }
  }
  return link;
}

// ---------------------------------------------------------------------------------------------
// Addresses: ifaddrmsg { u8 family, u8 prefixlen, u8 flags, u8 scope, u32 index }.

const IFADDRMSG_LEN = 8;

export interface Address {
  family: Family;
  index: number;
  /** The local address (IFA_LOCAL when given, else IFA_ADDRESS). */
  address: string;
  prefixLength: number;
  /** Point-to-point peer, when it differs from the local address. */
  peer?: string;
  /** IFA_LOCAL, when the kernel sent it (always for IPv4). */
  local?: string;
  /** IFA_RT_PRIORITY: the metric of the prefix route the kernel adds for the address. */
  priority?: number;
  broadcast?: string;
  label?: string;
  scope: number;
  flags: number;
  /** Seconds left; undefined means forever. */
  validLifetime?: number;
  preferredLifetime?: number;
}

export function ifaddrmsg(family: number, prefixLength: number, flags: number, scope: number, index: number): Buffer {
  const b = Buffer.alloc(IFADDRMSG_LEN);
  b.writeUInt8(family, 0);
  b.writeUInt8(prefixLength, 1);
  b.writeUInt8(flags & 0xff, 2);
  b.writeUInt8(scope, 3);
  b.writeUInt32LE(index >>> 0, 4);
  return b;
}

export function decodeAddress(m: NlMessage): Address {
  const p = m.payload;
  if (p.length < IFADDRMSG_LEN) malformed(`ifaddrmsg: ${p.length} bytes`);
  const af = p.readUInt8(0);
  const family = familyName(af);
  const prefixLength = p.readUInt8(1);
  if (prefixLength > (af === AF_INET ? 32 : 128)) malformed(`ifaddrmsg: prefix length ${prefixLength}`);
  const a = parseAttrs(p.subarray(IFADDRMSG_LEN));
  const local = ipOf(a.get(IFA.LOCAL), af, 'IFA_LOCAL');
  const address = ipOf(a.get(IFA.ADDRESS), af, 'IFA_ADDRESS');
  const addr = local ?? address;
  if (addr === undefined) malformed('ifaddrmsg: no address');
  const out: Address = {
    family,
    index: p.readUInt32LE(4),
    address: addr,
    prefixLength,
    scope: p.readUInt8(3),
    flags: u32(a.get(IFA.FLAGS), 'IFA_FLAGS') ?? p.readUInt8(2),
  };
  if (local !== undefined) out.local = local;
  const prio = u32(a.get(IFA.RT_PRIORITY), 'IFA_RT_PRIORITY');
  if (prio !== undefined) out.priority = prio;
  if (local !== undefined && address !== undefined && address !== local) out.peer = address;
  const brd = ipOf(a.get(IFA.BROADCAST), af, 'IFA_BROADCAST');
  if (brd) out.broadcast = brd;
  const label = str(a.get(IFA.LABEL));
  if (label) out.label = label;
  const ci = a.get(IFA.CACHEINFO);
  if (ci) {
    if (ci.length < 8) malformed(`IFA_CACHEINFO: ${ci.length} bytes`);
    const preferred = ci.readUInt32LE(0);
    const valid = ci.readUInt32LE(4);
    if (valid !== INFINITY_LIFE) out.validLifetime = valid;
    if (preferred !== INFINITY_LIFE) out.preferredLifetime = preferred;
  }
  return out;
}

export interface AddressRequest {
  index: number;
  /** 'a.b.c.d/n' or 'x::y/n'. */
  address: string;
  /** Seconds; omitted for forever. */
  validLifetime?: number;
  preferredLifetime?: number;
  /** IFA_F_* flags (NODAD, NOPREFIXROUTE, ...). */
  flags?: number;
  scope?: number;
  label?: string;
}

/** The body of RTM_NEWADDR/RTM_DELADDR. */
export function addressBody(r: AddressRequest, forDelete = false): Buffer {
  const p = parseCidr(r.address);
  const af = afOf(p.family);
  const flags = r.flags ?? 0;
  const attrs: Attr[] = [attr.ip(IFA.LOCAL, p.address)];
  if (p.family === 'inet4') {
    attrs.push(attr.ip(IFA.ADDRESS, p.address));
    if (!forDelete && p.prefixLength < 31) attrs.push(attr.ip(IFA.BROADCAST, ipv4Broadcast(p.address, p.prefixLength)));
  } else {
    attrs[0] = attr.ip(IFA.ADDRESS, p.address);
  }
  if (r.label) attrs.push(attr.str(IFA.LABEL, r.label));
  if (!forDelete && (r.validLifetime !== undefined || r.preferredLifetime !== undefined)) {
    const ci = Buffer.alloc(16);
    const valid = r.validLifetime ?? INFINITY_LIFE;
    ci.writeUInt32LE(Math.min(r.preferredLifetime ?? valid, valid) >>> 0, 0);
    ci.writeUInt32LE(valid >>> 0, 4);
    attrs.push(attr.bytes(IFA.CACHEINFO, ci));
  }
  if (!forDelete && flags > 0xff) attrs.push(attr.u32(IFA.FLAGS, flags));
  return Buffer.concat([ifaddrmsg(af, p.prefixLength, flags, r.scope ?? RT_SCOPE.UNIVERSE, r.index), encodeAttrs(attrs)]);
}

function ipv4Broadcast(addr: string, len: number): string {
  const b = ipToBytes(addr);
  for (let bit = len; bit < 32; bit++) b[bit >> 3]! |= 0x80 >> (bit & 7);
  return bytesToIp(b);
}

// ---------------------------------------------------------------------------------------------
// Routes: rtmsg { u8 family, dst_len, src_len, tos, table, protocol, scope, type; u32 flags }.

const RTMSG_LEN = 12;

export interface Route {
  family: Family;
  /** 'a.b.c.d/n'; '0.0.0.0/0' or '::/0' for a default route. */
  dst: string;
  /** Source prefix (policy routing), when set. */
  src?: string;
  gateway?: string;
  /** Output link index. */
  oif?: number;
  /** The metric (RTA_PRIORITY); 0 when absent. */
  priority: number;
  table: number;
  protocol: number;
  scope: number;
  type: number;
  /** Preferred source address. */
  prefsrc?: string;
  mtu?: number;
  flags: number;
}

export function rtmsg(family: number, dstLen: number, srcLen: number, table: number, protocol: number, scope: number, type: number): Buffer {
  const b = Buffer.alloc(RTMSG_LEN);
  b.writeUInt8(family, 0);
  b.writeUInt8(dstLen, 1);
  b.writeUInt8(srcLen, 2);
  b.writeUInt8(0, 3);
  b.writeUInt8(table & 0xff, 4);
  b.writeUInt8(protocol, 5);
  b.writeUInt8(scope, 6);
  b.writeUInt8(type, 7);
  return b;
}

export function decodeRoute(m: NlMessage): Route {
  const p = m.payload;
  if (p.length < RTMSG_LEN) malformed(`rtmsg: ${p.length} bytes`);
  const af = p.readUInt8(0);
  const family = familyName(af);
  const max = af === AF_INET ? 32 : 128;
  const dstLen = p.readUInt8(1);
  const srcLen = p.readUInt8(2);
  if (dstLen > max || srcLen > max) malformed(`rtmsg: prefix lengths ${dstLen}/${srcLen}`);
  const a = parseAttrs(p.subarray(RTMSG_LEN));
  const zero = af === AF_INET ? '0.0.0.0' : '::';
  const dst = ipOf(a.get(RTA.DST), af, 'RTA_DST') ?? zero;
  const route: Route = {
    family,
    dst: `${dst}/${dstLen}`,
    priority: u32(a.get(RTA.PRIORITY), 'RTA_PRIORITY') ?? 0,
    table: u32(a.get(RTA.TABLE), 'RTA_TABLE') ?? p.readUInt8(4),
    protocol: p.readUInt8(5),
    scope: p.readUInt8(6),
    type: p.readUInt8(7),
    flags: p.readUInt32LE(8),
  };
  const src = ipOf(a.get(RTA.SRC), af, 'RTA_SRC');
  if (src !== undefined || srcLen > 0) route.src = `${src ?? zero}/${srcLen}`;
  const gw = ipOf(a.get(RTA.GATEWAY), af, 'RTA_GATEWAY');
  if (gw) route.gateway = gw;
  const oif = u32(a.get(RTA.OIF), 'RTA_OIF');
  if (oif !== undefined) route.oif = oif;
  const prefsrc = ipOf(a.get(RTA.PREFSRC), af, 'RTA_PREFSRC');
  if (prefsrc) route.prefsrc = prefsrc;
  const metrics = a.get(RTA.METRICS);
  if (metrics) {
    const mtu = u32(parseAttrs(metrics).get(RTAX_MTU), 'RTAX_MTU');
    if (mtu) route.mtu = mtu;
  }
  return route;
}

export interface RouteRequest {
  /** 'a.b.c.d/n', or 'default' / '0.0.0.0/0' / '::/0'. */
  dst: string;
  /** Needed to tell the family of 'default' when there is no gateway. */
  family?: Family;
  gateway?: string;
  oif?: number;
  metric?: number;
  /** Default main (254). */
  table?: number;
  /** Default static. */
  protocol?: number;
  /** Default: universe with a gateway, link without. */
  scope?: number;
  /** Default unicast. */
  type?: number;
  prefsrc?: string;
  mtu?: number;
}

export function normalizeRouteDst(dst: string, family?: Family, gateway?: string): { family: Family; address: string; prefixLength: number } {
  if (dst === 'default' || dst === '') {
    const f = family ?? (gateway && gateway.includes(':') ? 'inet6' : 'inet4');
    return { family: f, address: f === 'inet4' ? '0.0.0.0' : '::', prefixLength: 0 };
  }
  const p = parseCidr(dst);
  return { family: p.family, address: p.address, prefixLength: p.prefixLength };
}

/** The body of RTM_NEWROUTE/RTM_DELROUTE. */
export function routeBody(r: RouteRequest): Buffer {
  const d = normalizeRouteDst(r.dst, r.family, r.gateway);
  const af = afOf(d.family);
  const table = r.table ?? RT_TABLE.MAIN;
  const scope = r.scope ?? (r.gateway ? RT_SCOPE.UNIVERSE : RT_SCOPE.LINK);
  const attrs: Attr[] = [];
  if (d.prefixLength > 0) attrs.push(attr.ip(RTA.DST, d.address));
  if (r.gateway) {
    if ((r.gateway.includes(':') ? 'inet6' : 'inet4') !== d.family) throw new Error(`route ${r.dst}: gateway ${r.gateway} is of another family`);
    attrs.push(attr.ip(RTA.GATEWAY, r.gateway));
  }
  if (r.oif !== undefined) attrs.push(attr.u32(RTA.OIF, r.oif));
  if (r.metric !== undefined) attrs.push(attr.u32(RTA.PRIORITY, r.metric));
  if (r.prefsrc) attrs.push(attr.ip(RTA.PREFSRC, r.prefsrc));
  attrs.push(attr.u32(RTA.TABLE, table));
  if (r.mtu) attrs.push(attr.nested(RTA.METRICS, [attr.u32(RTAX_MTU, r.mtu)]));
  const head = rtmsg(af, d.prefixLength, 0, table > 255 ? RT_TABLE.UNSPEC : table, r.protocol ?? RTPROT.STATIC, scope, r.type ?? RTN.UNICAST);
  return Buffer.concat([head, encodeAttrs(attrs)]);
}

// ---------------------------------------------------------------------------------------------
// Events: what a multicast subscriber receives.

export type RtnlEvent =
  | { kind: 'link'; action: 'new' | 'del'; link: Link }
  | { kind: 'address'; action: 'new' | 'del'; address: Address }
  | { kind: 'route'; action: 'new' | 'del'; route: Route };

/** The event a message carries, or undefined for a type subscribers do not care about. */
export function decodeEvent(m: NlMessage): RtnlEvent | undefined {
  switch (m.type) {
    case RTM.NEWLINK:
    case RTM.DELLINK:
      return { kind: 'link', action: m.type === RTM.NEWLINK ? 'new' : 'del', link: decodeLink(m) };
    case RTM.NEWADDR:
    case RTM.DELADDR:
      return { kind: 'address', action: m.type === RTM.NEWADDR ? 'new' : 'del', address: decodeAddress(m) };
    case RTM.NEWROUTE:
    case RTM.DELROUTE:
      return { kind: 'route', action: m.type === RTM.NEWROUTE ? 'new' : 'del', route: decodeRoute(m) };
    default:
      return undefined;
  }
}
