import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type Address,
  AF_INET,
  IFA,
  IFLA,
  IFLA_INFO,
  IFLA_VLAN,
  MalformedMessageError,
  NLM_F,
  NLMSG,
  RTA,
  RTM,
  RTPROT,
  type Route,
  addressBody,
  attr,
  decodeAddress,
  decodeError,
  decodeEvent,
  decodeLink,
  decodeRoute,
  encodeAttrs,
  encodeMessage,
  ifaddrmsg,
  ifinfomsg,
  parseAttrs,
  routeBody,
  splitMessages,
} from './netlink.ts';

/** Datagrams captured from a real kernel (one hex line each), see test/fixtures/networkd. */
function fixture(name: string): Buffer[] {
  return fs
    .readFileSync(`test/fixtures/networkd/${name}`, 'utf8')
    .trim()
    .split('\n')
    .map((l) => Buffer.from(l, 'hex'));
}

function dump<T>(name: string, type: number, decode: (m: ReturnType<typeof splitMessages>[number]) => T): T[] {
  return fixture(name)
    .flatMap((d) => splitMessages(d))
    .filter((m) => m.type === type)
    .map(decode);
}

describe('netlink framing and attributes', () => {
  it('encodes a header, aligns to 4 bytes and splits it back', () => {
    const body = Buffer.from([1, 2, 3, 4, 5]);
    const m = encodeMessage({ type: RTM.GETLINK, flags: NLM_F.REQUEST | NLM_F.DUMP, seq: 42, pid: 0 }, body);
    expect(m.length).toBe(24);
    expect(m.readUInt32LE(0)).toBe(21);
    const two = splitMessages(Buffer.concat([m, m]));
    expect(two).toHaveLength(2);
    expect(two[1]).toMatchObject({ type: RTM.GETLINK, flags: NLM_F.REQUEST | NLM_F.DUMP, seq: 42, pid: 0 });
    expect([...two[1]!.payload]).toEqual([1, 2, 3, 4, 5]);
  });

  it('refuses broken framing', () => {
    expect(() => splitMessages(Buffer.alloc(8))).toThrow(MalformedMessageError);
    const m = encodeMessage({ type: 16, flags: 0, seq: 1, pid: 0 }, Buffer.alloc(4));
    m.writeUInt32LE(200, 0);
    expect(() => splitMessages(m)).toThrow(/message length 200/);
    m.writeUInt32LE(3, 0);
    expect(() => splitMessages(m)).toThrow(MalformedMessageError);
  });

  it('nests attributes and parses them back, flags masked', () => {
    const b = encodeAttrs([attr.str(IFLA.IFNAME, 'eth0.100'), attr.nested(IFLA.LINKINFO, [attr.str(IFLA_INFO.KIND, 'vlan'), attr.nested(IFLA_INFO.DATA, [attr.u16(IFLA_VLAN.ID, 100)])])]);
    const a = parseAttrs(b);
    expect(a.get(IFLA.IFNAME)!.toString()).toBe('eth0.100\0');
    expect(b.readUInt16LE(b.indexOf(Buffer.from('vlan')) - 2) & 0x8000).toBe(0); // KIND is not nested
    const info = parseAttrs(a.get(IFLA.LINKINFO)!);
    expect(info.get(IFLA_INFO.KIND)!.toString()).toBe('vlan\0');
    expect(parseAttrs(info.get(IFLA_INFO.DATA)!).get(IFLA_VLAN.ID)!.readUInt16LE(0)).toBe(100);
    expect(() => parseAttrs(Buffer.from([40, 0, 1, 0, 0, 0, 0, 0]))).toThrow(MalformedMessageError);
  });

  it('decodes errors with the kernel extended-ack message', () => {
    const orig = encodeMessage({ type: RTM.NEWADDR, flags: 5, seq: 9, pid: 0 }, Buffer.alloc(0));
    const payload = Buffer.concat([Buffer.from([0xef, 0xff, 0xff, 0xff]) /* -17 */, orig.subarray(0, 16), encodeAttrs([attr.str(1, 'ipv4: Address already assigned')])]);
    const m = splitMessages(encodeMessage({ type: NLMSG.ERROR, flags: NLM_F.CAPPED | NLM_F.ACK_TLVS, seq: 9, pid: 0 }, payload))[0]!;
    expect(decodeError(m)).toEqual({ errno: 17, message: 'ipv4: Address already assigned' });
    const ack = splitMessages(encodeMessage({ type: NLMSG.ERROR, flags: NLM_F.CAPPED, seq: 9, pid: 0 }, Buffer.concat([Buffer.alloc(4), orig.subarray(0, 16)])))[0]!;
    expect(decodeError(ack)).toEqual({ errno: 0 });
  });
});

describe('links, addresses and routes from a real kernel dump', () => {
  it('links: names, MACs, MTU, flags, kinds, parents', () => {
    const links = dump('rtm-getlink-dump.hex', RTM.NEWLINK, decodeLink);
    const by = Object.fromEntries(links.map((l) => [l.name, l]));
    expect(Object.keys(by).sort()).toEqual(['eth0', 'eth1', 'lo', 'mv0']);
    expect(by.lo).toMatchObject({ index: 1, loopback: true, typeName: 'loopback', up: true, mtu: 65536 });
    expect(by.eth0).toMatchObject({ mac: '52:54:00:12:34:56', mtu: 1400, kind: 'veth', up: true, typeName: 'ether', broadcast: 'ff:ff:ff:ff:ff:ff' });
    expect(by.eth0!.parent).toBe(by.eth1!.index);
    expect(by.mv0).toMatchObject({ kind: 'macvlan', parent: by.eth0!.index, up: false, qdisc: 'noop' });
    expect(by.eth0!.qdisc).toBe('noqueue');
  });


  it('addresses: local, prefix, broadcast, lifetimes', () => {
    const addrs = dump('rtm-getaddr-dump.hex', RTM.NEWADDR, decodeAddress);
    const v4 = addrs.find((a) => a.address === '192.168.50.10')!;
    expect(v4).toMatchObject({ family: 'inet4', prefixLength: 24, scope: 0, label: 'eth0', local: '192.168.50.10' });
    expect(v4.validLifetime).toBeLessThanOrEqual(3600);
    expect(v4.preferredLifetime).toBeLessThanOrEqual(1800);
    expect(addrs.find((a) => a.address === '2001:db8:50::10')).toMatchObject({ family: 'inet6', prefixLength: 64 });
    const lo = addrs.find((a) => a.address === '127.0.0.1')!;
    expect(lo.validLifetime).toBeUndefined();
  });

  it('routes: default, gateway, metric, protocol, table, MTU metric', () => {
    const routes = dump('rtm-getroute-dump.hex', RTM.NEWROUTE, decodeRoute);
    expect(routes.find((r) => r.dst === '0.0.0.0/0')).toMatchObject({ gateway: '192.168.50.1', priority: 1024, protocol: RTPROT.DHCP, table: 254 });
    expect(routes.find((r) => r.dst === '10.20.0.0/16')).toMatchObject({ gateway: '192.168.50.254', priority: 50, protocol: RTPROT.BOOT });
    expect(routes.find((r) => r.dst === '2001:db8:60::/48')).toMatchObject({ family: 'inet6', gateway: '2001:db8:50::1', mtu: 1280 });
    expect(routes.find((r) => r.dst === '192.168.50.10/32')).toMatchObject({ table: 255, type: 2 });
  });
});

describe('request bodies', () => {
  const asMessage = (type: number, body: Buffer) => splitMessages(encodeMessage({ type, flags: 0, seq: 1, pid: 0 }, body))[0]!;

  it('address requests round-trip (IPv4 with broadcast and lifetimes, IPv6)', () => {
    const a: Address = decodeAddress(asMessage(RTM.NEWADDR, addressBody({ index: 3, address: '10.0.0.2/24', validLifetime: 600, preferredLifetime: 300 })));
    expect(a).toEqual({ family: 'inet4', index: 3, address: '10.0.0.2', local: '10.0.0.2', prefixLength: 24, scope: 0, flags: 0, broadcast: '10.0.0.255', validLifetime: 600, preferredLifetime: 300 });
    const v6 = decodeAddress(asMessage(RTM.NEWADDR, addressBody({ index: 4, address: '2001:db8::2/64', flags: 0x202 })));
    expect(v6).toMatchObject({ family: 'inet6', address: '2001:db8::2', prefixLength: 64, flags: 0x202 });
    const del = parseAttrs(addressBody({ index: 3, address: '10.0.0.2/24' }, true).subarray(8));
    expect(del.has(IFA.BROADCAST)).toBe(false);
    expect(del.has(IFA.CACHEINFO)).toBe(false);
  });

  it('route requests round-trip (default via gateway, prefix, IPv6 with MTU)', () => {
    const r: Route = decodeRoute(asMessage(RTM.NEWROUTE, routeBody({ dst: 'default', gateway: '10.0.0.1', oif: 2, metric: 1024, protocol: RTPROT.DHCP })));
    expect(r).toMatchObject({ family: 'inet4', dst: '0.0.0.0/0', gateway: '10.0.0.1', oif: 2, priority: 1024, table: 254, protocol: RTPROT.DHCP, scope: 0, type: 1 });
    const p = decodeRoute(asMessage(RTM.NEWROUTE, routeBody({ dst: '10.1.0.0/16', oif: 2 })));
    expect(p).toMatchObject({ dst: '10.1.0.0/16', scope: 253 });
    expect(p.gateway).toBeUndefined();
    const v6 = decodeRoute(asMessage(RTM.NEWROUTE, routeBody({ dst: '::/0', gateway: 'fe80::1', oif: 2, mtu: 1280 })));
    expect(v6).toMatchObject({ family: 'inet6', dst: '::/0', gateway: 'fe80::1', mtu: 1280 });
    expect(() => routeBody({ dst: '10.0.0.0/8', gateway: 'fe80::1' })).toThrow(/another family/);
    const big = parseAttrs(routeBody({ dst: '10.0.0.0/8', table: 1000 }).subarray(12));
    expect(big.get(RTA.TABLE)!.readUInt32LE(0)).toBe(1000);
  });

  it('links: alias and alternative names', () => {
    const body = Buffer.concat([
      ifinfomsg(0, 3),
      encodeAttrs([
        attr.str(IFLA.IFNAME, 'eth0'),
        attr.str(IFLA.IFALIAS, 'uplink'),
        attr.nested(IFLA.PROP_LIST, [attr.str(IFLA.ALT_IFNAME, 'enp0s3'), attr.str(IFLA.ALT_IFNAME, 'enx525400123456')]),
      ]),
    ]);
    expect(decodeLink(asMessage(RTM.NEWLINK, body))).toMatchObject({ alias: 'uplink', altNames: ['enp0s3', 'enx525400123456'] });
  });

  it('addresses: the prefix route metric (IFA_RT_PRIORITY)', () => {
    const body = Buffer.concat([ifaddrmsg(AF_INET, 24, 0, 0, 2), encodeAttrs([attr.ip(IFA.LOCAL, '10.0.0.2'), attr.ip(IFA.ADDRESS, '10.0.0.2'), attr.u32(IFA.RT_PRIORITY, 100)])]);
    expect(decodeAddress(asMessage(RTM.NEWADDR, body))).toMatchObject({ address: '10.0.0.2', local: '10.0.0.2', priority: 100 });
  });

  it('a VLAN link request carries IFLA_LINKINFO with kind and id', () => {
    const body = Buffer.concat([
      ifinfomsg(0, 0),
      encodeAttrs([attr.str(IFLA.IFNAME, 'eth0.7'), attr.u32(IFLA.LINK, 2), attr.nested(IFLA.LINKINFO, [attr.str(IFLA_INFO.KIND, 'vlan'), attr.nested(IFLA_INFO.DATA, [attr.u16(IFLA_VLAN.ID, 7)])])]),
    ]);
    const l = decodeLink(asMessage(RTM.NEWLINK, body));
    expect(l).toMatchObject({ name: 'eth0.7', parent: 2, kind: 'vlan', vlan: { id: 7, protocol: '802.1Q' } });
  });

  it('events carry kind and action', () => {
    const m = asMessage(RTM.DELADDR, addressBody({ index: 1, address: '10.0.0.2/8' }));
    expect(decodeEvent(m)).toMatchObject({ kind: 'address', action: 'del', address: { address: '10.0.0.2' } });
    expect(decodeEvent(asMessage(NLMSG.NOOP, Buffer.alloc(0)))).toBeUndefined();
    expect(() => decodeAddress(asMessage(RTM.NEWADDR, Buffer.from([AF_INET, 40, 0, 0, 1, 0, 0, 0])))).toThrow(MalformedMessageError);
  });
});
