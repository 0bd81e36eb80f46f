// One line per captured packet for `bronzectl pcap` without -o (talosctl prints gopacket's
// dump; this is a shorter, tcpdump-like line): time, addresses and what the packet is, for
// Ethernet (with 802.1Q tags) or raw IP, IPv4, IPv6, ARP, TCP, UDP, ICMP and ICMPv6.
import { bytesToIp } from '../lib/ip.ts';
import { LINKTYPE_RAW, type PcapPacket } from '../lib/pcap.ts';

const mac = (b: Buffer, o: number) => [...b.subarray(o, o + 6)].map((x) => x.toString(16).padStart(2, '0')).join(':');
const ip4 = (b: Buffer, o: number) => bytesToIp(b.subarray(o, o + 4));
const ip6 = (b: Buffer, o: number) => bytesToIp(b.subarray(o, o + 16));

const TCP_FLAGS: Array<[number, string]> = [
  [0x02, 'S'],
  [0x01, 'F'],
  [0x04, 'R'],
  [0x08, 'P'],
  [0x10, '.'],
];

function l4(proto: number, b: Buffer, o: number, src: string, dst: string, v6: boolean): string {
  if (o > b.length) return `${src} > ${dst}: truncated`;
  if (proto === 6 && b.length >= o + 14) {
    const flags = b[o + 13]!;
    const f = TCP_FLAGS.filter(([bit]) => flags & bit).map(([, c]) => c).join('') || 'none';
    return `${src}.${b.readUInt16BE(o)} > ${dst}.${b.readUInt16BE(o + 2)}: Flags [${f}], seq ${b.readUInt32BE(o + 4)}, length ${Math.max(0, b.length - o - ((b[o + 12]! >> 4) * 4))}`;
  }
  if ((proto === 17 || proto === 136) && b.length >= o + 8) return `${src}.${b.readUInt16BE(o)} > ${dst}.${b.readUInt16BE(o + 2)}: UDP, length ${b.readUInt16BE(o + 4) - 8}`;
  if ((proto === 1 && !v6) || (proto === 58 && v6)) {
    const type = b[o]!;
    const echo: Record<number, string> = v6 ? { 128: 'echo request', 129: 'echo reply' } : { 8: 'echo request', 0: 'echo reply' };
    const what = echo[type] ? `${echo[type]}, id ${b.readUInt16BE(o + 4)}, seq ${b.readUInt16BE(o + 6)}` : `type ${type}, code ${b[o + 1]}`;
    return `${src} > ${dst}: ${v6 ? 'ICMP6' : 'ICMP'} ${what}, length ${b.length - o}`;
  }
  return `${src} > ${dst}: ip-proto-${proto} length ${b.length - o}`;
}

function ip(b: Buffer, o: number): string {
  const version = b[o]! >> 4;
  if (version === 4 && b.length >= o + 20) return `IP ${l4(b[o + 9]!, b, o + (b[o]! & 0xf) * 4, ip4(b, o + 12), ip4(b, o + 16), false)}`;
  if (version === 6 && b.length >= o + 40) return `IP6 ${l4(b[o + 6]!, b, o + 40, ip6(b, o + 8), ip6(b, o + 24), true)}`;
  return `IP version ${version}, length ${b.length - o}`;
}

/** The one-line description of a packet of the given pcap link type. */
export function describePacket(p: PcapPacket, linktype: number): string {
  const t = new Date(p.timeMs);
  const time = `${t.toISOString().slice(11, 19)}.${String(Math.floor((p.timeMs % 1000) * 1000)).padStart(6, '0')}`;
  const b = p.data;
  if (linktype === LINKTYPE_RAW) return `${time} ${ip(b, 0)}`;
  if (b.length < 14) return `${time} truncated frame, length ${p.origLen}`;
  let type = b.readUInt16BE(12);
  let o = 14;
  while ((type === 0x8100 || type === 0x88a8) && b.length >= o + 4) {
    type = b.readUInt16BE(o + 2);
    o += 4;
  }
  if (type === 0x0800 || type === 0x86dd) return `${time} ${ip(b, o)}`;
  if (type === 0x0806 && b.length >= o + 28) {
    const op = b.readUInt16BE(o + 6);
    return op === 1 ? `${time} ARP, Request who-has ${ip4(b, o + 24)} tell ${ip4(b, o + 14)}, length ${p.origLen}` : `${time} ARP, Reply ${ip4(b, o + 14)} is-at ${mac(b, o + 8)}, length ${p.origLen}`;
  }
  return `${time} ${mac(b, 6)} > ${mac(b, 0)}, ethertype 0x${type.toString(16).padStart(4, '0')}, length ${p.origLen}`;
}
