// The names Talos gives kernel networking numbers in its resource specs (pkg/machinery/nethelpers:
// the text of each value in YAML, the value itself in proto_spec), as data. networkd names what
// it observes with them; the proto codecs turn the names back into numbers.
import { ipToBytes } from '../../lib/ip.ts';
import { FlagTable, NameTable } from './names.ts';

const seq = (names: string[], start = 0): Array<[number, string]> => names.map((n, i) => [start + i, n]);
const bitsFrom = (first: number, names: string[]): Array<[number, string]> => names.map((n, i) => [first * 2 ** i, n]);

/** nethelpers.LinkType: ARPHRD_* numbers. */
export const LINK_TYPE = new NameTable('link type', [
  ...seq(['netrom', 'ether', 'eether', 'ax25', 'pronet', 'chaos', 'ieee802', 'arcnet', 'atalk']),
  [15, 'dlci'],
  [19, 'atm'],
  [23, 'metricom'],
  [24, 'ieee1394'],
  [27, 'eui64'],
  [32, 'infiniband'],
  ...seq(['slip', 'cslip', 'slip6', 'cslip6', 'rsrvd'], 256),
  [264, 'adapt'],
  [270, 'rose'],
  [271, 'x25'],
  [272, 'hwx25'],
  [280, 'can'],
  [512, 'ppp'],
  [513, 'cisco'],
  [513, 'hdlc'],
  ...seq(['lapb', 'ddcmp', 'rawhdlc'], 516),
  ...seq(['ipip', 'tunnel6', 'frad', 'skip', 'loopback', 'localtlk', 'fddi', 'bif', 'sit', 'ip/ddp', 'gre', 'pimreg', 'hippi', 'ash', 'econet', 'irda', 'fcpp', 'fcal', 'fcpl'], 768),
  ...seq(Array.from({ length: 13 }, (_, i) => `fcfb_${i}`), 787),
  ...seq(['tr', 'ieee802.11', 'ieee802.11_prism', 'ieee802.11_radiotap', 'ieee802.15.4', 'ieee802.15.4_monitor'], 800),
  ...seq(['phonet', 'phonet_pipe', 'caif', 'ip6gre', 'netlink', '6lowpan'], 820),
  [65535, 'void'],
  [65534, 'nohdr'],
]);

/** IFF_* link flags. */
export const LINK_FLAGS = new FlagTable(
  'link flag',
  bitsFrom(1, ['UP', 'BROADCAST', 'DEBUG', 'LOOPBACK', 'POINTTOPOINT', 'NOTRAILERS', 'RUNNING', 'NOARP', 'PROMISC', 'ALLMULTI', 'MASTER', 'SLAVE', 'MULTICAST', 'PORTSEL', 'AUTOMEDIA', 'DYNAMIC', 'LOWER_UP', 'DORMANT', 'ECHO']),
);

/** IFA_F_* address flags. */
export const ADDRESS_FLAGS = new FlagTable(
  'address flag',
  bitsFrom(1, ['temporary', 'nodad', 'optimistic', 'dadfailed', 'homeaddress', 'deprecated', 'tentative', 'permanent', 'mngmtmpaddr', 'noprefixroute', 'mcautojoin', 'stableprivacy']),
);

/** RTM_F_* route flags. */
export const ROUTE_FLAGS = new FlagTable('route flag', bitsFrom(256, ['notify', 'cloned', 'equalize', 'prefix', 'lookup_table', 'fib_match', 'offload', 'trap']));

export const FAMILY = new NameTable('address family', [
  [2, 'inet4'],
  [10, 'inet6'],
]);

export const SCOPE = new NameTable('scope', [
  [0, 'global'],
  [200, 'site'],
  [253, 'link'],
  [254, 'host'],
  [255, 'nowhere'],
]);

export const ROUTE_TYPE = new NameTable('route type', seq(['unspec', 'unicast', 'local', 'broadcast', 'anycast', 'multicast', 'blackhole', 'unreachable', 'prohibit', 'throw', 'nat', 'xresolve']));

export const ROUTE_PROTOCOL = new NameTable('route protocol', [
  ...seq(['unspec', 'redirect', 'kernel', 'boot', 'static']),
  ...seq(['ra', 'mrt', 'zebra', 'bird', 'dnrouted', 'xorp', 'ntk', 'dhcp', 'mrtd', 'keepalived'], 9),
  [42, 'babel'],
  [99, 'openr'],
  ...seq(['bgp', 'isis', 'ospf', 'rip'], 186),
  [192, 'eigrp'],
]);

/** Routing tables; Talos names four, the others are shown as their number. */
export const ROUTING_TABLE = new NameTable('routing table', [
  [0, 'unspec'],
  [253, 'default'],
  [254, 'main'],
  [255, 'local'],
]);

/** IF_OPER_* (RFC 2863) operational states. */
export const OPER_STATE = new NameTable('operational state', seq(['unknown', 'notPresent', 'down', 'lowerLayerDown', 'testing', 'dormant', 'up']));

/** ethtool's PORT_* numbers. */
export const PORT = new NameTable('port', [...seq(['TwistedPair', 'AUI', 'MII', 'Fibre', 'BNC', 'DirectAttach']), [239, 'None'], [255, 'Other']]);

/** ethtool's DUPLEX_* numbers. */
export const DUPLEX = new NameTable('duplex', [
  [0, 'Half'],
  [1, 'Full'],
  [255, 'Unknown'],
]);

export const VLAN_PROTOCOL = new NameTable('VLAN protocol', [
  [0x8100, '802.1q'],
  [0x88a8, '802.1ad'],
]);

/** common.NetIP of an address text; undefined for '' (not known). */
export function netIP(addr: string | undefined): { ip: Buffer } | undefined {
  return addr ? { ip: ipToBytes(addr) } : undefined;
}

/** common.NetIPPrefix of 'a.b.c.d/n'; undefined for ''. */
export function netIPPrefix(prefix: string | undefined): { ip: Buffer; prefix_length: number } | undefined {
  if (!prefix) return undefined;
  const slash = prefix.lastIndexOf('/');
  if (slash < 0) throw new Error(`not an IP prefix: ${JSON.stringify(prefix)}`);
  const bits = prefix.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) throw new Error(`not an IP prefix: ${JSON.stringify(prefix)}`);
  return { ip: ipToBytes(prefix.slice(0, slash)), prefix_length: Number(bits) };
}

/** 'aa:bb:cc:dd:ee:ff' as bytes; '' is no bytes. */
export function hardwareAddr(text: string | undefined): Buffer {
  if (!text) return Buffer.alloc(0);
  if (!/^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2})*$/.test(text)) throw new Error(`not a hardware address: ${JSON.stringify(text)}`);
  return Buffer.from(text.replace(/:/g, ''), 'hex');
}
