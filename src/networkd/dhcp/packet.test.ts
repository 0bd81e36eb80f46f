import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  BOOTREPLY,
  MalformedPacketError,
  MessageType,
  Opt,
  decodeClasslessRoutes,
  decodeDomainSearch,
  decodePacket,
  encodeClasslessRoutes,
  encodeDomainSearch,
  encodePacket,
  interpretOptions,
  opt,
} from './packet.ts';

const MAC = '02:42:ac:63:00:02';

function fixture(name: string): Buffer {
  return Buffer.from(fs.readFileSync(`test/fixtures/networkd/${name}`, 'utf8').trim(), 'hex');
}

describe('DHCP packets', () => {
  it('decodes a real dnsmasq ACK with every option networkd uses', () => {
    const p = decodePacket(fixture('dnsmasq-ack.hex'));
    expect(p).toMatchObject({ op: BOOTREPLY, htype: 1, hlen: 6, chaddr: MAC, yiaddr: '10.99.0.57', flags: 0x8000 });
    expect(interpretOptions(p.options)).toEqual({
      messageType: MessageType.ACK,
      serverId: '10.99.0.1',
      subnetMask: '255.255.255.0',
      prefixLength: 24,
      routers: ['10.99.0.1'],
      dnsServers: ['10.99.0.53', '10.99.0.54'],
      domainName: 'bronze.test',
      hostname: 'node-a',
      mtu: 1400,
      ntpServers: ['10.99.0.123'],
      searchDomains: ['bronze.test', 'example.org'],
      classlessRoutes: [
        { destination: '10.20.0.0/16', router: '10.99.0.254' },
        { destination: '0.0.0.0/0', router: '10.99.0.1' },
      ],
      broadcast: '10.99.0.255',
      leaseTime: 120,
      renewalTime: 4,
      rebindingTime: 7,
    });
    expect(interpretOptions(decodePacket(fixture('dnsmasq-offer.hex')).options).messageType).toBe(MessageType.OFFER);
  });

  it('encodes what it decodes, padded to the BOOTP minimum', () => {
    const b = encodePacket({
      xid: 0xdeadbeef,
      secs: 3,
      broadcast: true,
      chaddr: MAC,
      options: [opt.u8(Opt.MESSAGE_TYPE, MessageType.DISCOVER), opt.bytes(Opt.PARAMETER_REQUEST, [1, 3, 6]), opt.str(Opt.HOSTNAME, 'node-a')],
    });
    expect(b.length).toBe(300);
    const p = decodePacket(b);
    expect(p).toMatchObject({ op: 1, xid: 0xdeadbeef, secs: 3, flags: 0x8000, ciaddr: '0.0.0.0', chaddr: MAC });
    expect(interpretOptions(p.options)).toMatchObject({ messageType: MessageType.DISCOVER, hostname: 'node-a' });
    expect([...p.options.get(Opt.PARAMETER_REQUEST)!]).toEqual([1, 3, 6]);
  });

  it('splits long options and concatenates them back (RFC 3396)', () => {
    const long = Buffer.alloc(600, 7);
    const p = decodePacket(encodePacket({ xid: 1, chaddr: MAC, options: [[200, long]] }));
    expect(p.options.get(200)!.equals(long)).toBe(true);
  });

  it('reads options overloaded into file and sname', () => {
    const b = encodePacket({ xid: 1, chaddr: MAC, options: [opt.u8(Opt.MESSAGE_TYPE, MessageType.ACK), opt.u8(Opt.OVERLOAD, 3)] });
    Buffer.from([Opt.HOSTNAME, 3, 0x61, 0x62, 0x63, 255]).copy(b, 108); // file
    Buffer.from([Opt.MTU, 2, 0x05, 0xdc, 255]).copy(b, 44); // sname
    const p = decodePacket(b);
    expect(interpretOptions(p.options)).toMatchObject({ hostname: 'abc', mtu: 1500 });
    expect(p.file).toBe('');
    expect(p.sname).toBe('');
  });

  it('decodes search domains with compression pointers and classless routes', () => {
    // "eng.example.com", then "example.com" as a pointer to offset 4.
    const v = Buffer.from([3, ...Buffer.from('eng'), 7, ...Buffer.from('example'), 3, ...Buffer.from('com'), 0, 0xc0, 4]);
    expect(decodeDomainSearch(v)).toEqual(['eng.example.com', 'example.com']);
    expect(decodeDomainSearch(encodeDomainSearch(['a.b', 'c']))).toEqual(['a.b', 'c']);
    expect(() => decodeDomainSearch(Buffer.from([0xc0, 0]))).toThrow(/pointer loop/);
    const routes = [
      { destination: '0.0.0.0/0', router: '10.0.0.1' },
      { destination: '10.17.0.0/16', router: '10.0.0.2' },
      { destination: '192.168.1.128/25', router: '0.0.0.0' },
    ];
    expect(decodeClasslessRoutes(encodeClasslessRoutes(routes))).toEqual(routes);
    expect(() => decodeClasslessRoutes(Buffer.from([33, 1, 2, 3, 4, 5]))).toThrow(MalformedPacketError);
  });

  it('refuses malformed packets and options', () => {
    const good = encodePacket({ xid: 1, chaddr: MAC, options: [opt.u8(Opt.MESSAGE_TYPE, MessageType.ACK)] });
    expect(() => decodePacket(good.subarray(0, 239))).toThrow(MalformedPacketError);
    const noCookie = Buffer.from(good);
    noCookie.writeUInt32BE(0, 236);
    expect(() => decodePacket(noCookie)).toThrow(/cookie/);
    const overrun = Buffer.from(good);
    overrun[241] = 200; // length of option 53
    expect(() => decodePacket(overrun)).toThrow(/runs past the end/);
    const bad = (code: number, value: number[]) => () => interpretOptions(new Map([[code, Buffer.from(value)]]));
    expect(bad(Opt.ROUTER, [1, 2, 3])).toThrow(MalformedPacketError);
    expect(bad(Opt.LEASE_TIME, [1])).toThrow(MalformedPacketError);
    expect(bad(Opt.SUBNET_MASK, [255, 0, 255, 0])).toThrow(/contiguous/);
    expect(bad(Opt.MTU, [5])).toThrow(MalformedPacketError);
  });
});
