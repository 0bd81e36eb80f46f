import { describe, expect, it } from 'vitest';
import { LINKTYPE_ETHERNET, LINKTYPE_RAW, PcapReader, pcapFileHeader, pcapRecord } from '../lib/pcap.ts';
import { describePacket } from './packets.ts';

const eth = (type: number, payload: Buffer) => Buffer.concat([Buffer.from('525400000902020000000901', 'hex'), Buffer.from([type >> 8, type & 0xff]), payload]);
const ipv4 = (proto: number, l4: Buffer) => {
  const h = Buffer.alloc(20);
  h[0] = 0x45;
  h.writeUInt16BE(20 + l4.length, 2);
  h[9] = proto;
  Buffer.from([10, 9, 0, 1, 10, 9, 0, 2]).copy(h, 12);
  return Buffer.concat([h, l4]);
};

describe('pcap stream and packet lines', () => {
  it('reads back what it writes, across chunk boundaries', () => {
    const stream = Buffer.concat([pcapFileHeader(65536, LINKTYPE_ETHERNET), pcapRecord(1_700_000_000_123.456, Buffer.from('abc'), 60), pcapRecord(1_700_000_001_000, Buffer.from('de'), 2)]);
    const r = new PcapReader();
    const got = [...r.push(stream.subarray(0, 30)), ...r.push(stream.subarray(30, 45)), ...r.push(stream.subarray(45))];
    expect(r.header).toEqual({ snaplen: 65536, linktype: LINKTYPE_ETHERNET });
    expect(got.map((p) => [p.data.toString(), p.origLen])).toEqual([['abc', 60], ['de', 2]]);
    expect(got[0]!.timeMs).toBeCloseTo(1_700_000_000_123.456, 2);
    expect(() => new PcapReader().push(Buffer.alloc(24))).toThrow(/not a pcap stream/);
  });

  it('describes ICMP, UDP, TCP, ARP and raw IP', () => {
    const t = Date.UTC(2026, 0, 1, 12, 0, 0);
    const icmp = eth(0x0800, ipv4(1, Buffer.from([8, 0, 0, 0, 0x42, 0x42, 0, 7, 1, 2])));
    expect(describePacket({ timeMs: t, data: icmp, origLen: icmp.length }, LINKTYPE_ETHERNET)).toBe('12:00:00.000000 IP 10.9.0.1 > 10.9.0.2: ICMP echo request, id 16962, seq 7, length 10');
    const udp = Buffer.from([0x30, 0x39, 0, 53, 0, 12, 0, 0, 1, 2, 3, 4]);
    expect(describePacket({ timeMs: t, data: ipv4(17, udp), origLen: 32 }, LINKTYPE_RAW)).toMatch(/IP 10\.9\.0\.1\.12345 > 10\.9\.0\.2\.53: UDP, length 4$/);
    const tcp = Buffer.alloc(20);
    tcp.writeUInt16BE(50000, 2);
    tcp[12] = 0x50;
    tcp[13] = 0x12;
    expect(describePacket({ timeMs: t, data: eth(0x0800, ipv4(6, tcp)), origLen: 54 }, LINKTYPE_ETHERNET)).toMatch(/> 10\.9\.0\.2\.50000: Flags \[S\.\]/);
    const arp = eth(0x0806, Buffer.from('0001080006040001020000000901' + '0a090001' + '000000000000' + '0a090002', 'hex'));
    expect(describePacket({ timeMs: t, data: arp, origLen: 42 }, LINKTYPE_ETHERNET)).toMatch(/ARP, Request who-has 10\.9\.0\.2 tell 10\.9\.0\.1/);
  });

  it('prints IPv6 addresses as RFC 5952 says: the longest run of zero groups is ::', () => {
    const h = Buffer.alloc(40 + 8);
    h[0] = 0x60;
    h[6] = 17; // UDP
    Buffer.from('20010000000000010000000000000001', 'hex').copy(h, 8); // 2001:0:0:1:0:0:0:1
    Buffer.from('fe800000000000000000000000000002', 'hex').copy(h, 24);
    h.writeUInt16BE(546, 40);
    h.writeUInt16BE(547, 42);
    h.writeUInt16BE(8, 44);
    expect(describePacket({ timeMs: 0, data: h, origLen: h.length }, LINKTYPE_RAW)).toMatch(/IP6 2001:0:0:1::1\.546 > fe80::2\.547: UDP, length 0$/);
  });
});
