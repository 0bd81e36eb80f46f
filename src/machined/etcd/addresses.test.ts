import type os from 'node:os';
import { describe, expect, it } from 'vitest';
import { addressTowards, etcdAddresses, filterAddresses, nodeAddresses } from './addresses.ts';

const v4 = (address: string, cidr: string): os.NetworkInterfaceInfo => ({ address, cidr, netmask: '', family: 'IPv4', mac: '', internal: false });
const v6 = (address: string, cidr: string): os.NetworkInterfaceInfo => ({ address, cidr, netmask: '', family: 'IPv6', mac: '', internal: false, scopeid: 0 });

// A cluster node under QEMU: the user network first (the same 10.0.2.15 on every node), the
// cluster's bridge second.
const ifaces = {
  lo: [{ ...v4('127.0.0.1', '127.0.0.1/8'), internal: true }],
  eth0: [v4('10.0.2.15', '10.0.2.15/24'), v6('fec0::5054:ff:fe12:3456', 'fec0::5054:ff:fe12:3456/64'), v6('fe80::1', 'fe80::1/64')],
  eth1: [v4('10.5.0.5', '10.5.0.5/24')],
};

describe('node addresses', () => {
  it('lists the routable ones, IPv4 first, in interface order', () => {
    expect(nodeAddresses(ifaces)).toEqual(['10.0.2.15', '10.5.0.5', 'fec0::5054:ff:fe12:3456']);
  });

  it('the address towards the control-plane endpoint is the one on its subnet', () => {
    expect(addressTowards('10.5.0.2', ifaces)).toBe('10.5.0.5');
    expect(addressTowards('10.0.2.2', ifaces)).toBe('10.0.2.15');
    expect(addressTowards('192.168.1.1', ifaces)).toBeUndefined();
    expect(addressTowards('cp.example.com', ifaces)).toBeUndefined();
    expect(addressTowards('127.0.0.1', ifaces)).toBeUndefined();
    expect(addressTowards(undefined, ifaces)).toBeUndefined();
  });
});

describe('subnet filter (Talos FilterIPs)', () => {
  const addrs = ['10.0.0.5', '192.168.1.1', '192.168.1.50', '2001:db8::7334', '2002:db8::7335'];

  it('adds in subnet order, each address once; a bare address is a host prefix', () => {
    expect(filterAddresses(addrs, ['192.168.0.0/16'])).toEqual(['192.168.1.1', '192.168.1.50']);
    expect(filterAddresses(addrs, ['2001::/16', '10.0.0.0/8', '0.0.0.0/0'])).toEqual(['2001:db8::7334', '10.0.0.5', '192.168.1.1', '192.168.1.50']);
    expect(filterAddresses(addrs, ['192.168.1.50'])).toEqual(['192.168.1.50']);
    expect(filterAddresses(addrs, ['172.16.0.0/12'])).toEqual([]);
  });

  it('"!" takes away what was added before it, not what comes after', () => {
    expect(filterAddresses(addrs, ['192.168.0.0/16', '!192.168.1.50'])).toEqual(['192.168.1.1']);
    expect(filterAddresses(addrs, ['!192.168.1.50', '192.168.0.0/16'])).toEqual(['192.168.1.1', '192.168.1.50']);
    expect(filterAddresses(addrs, ['!10.0.0.0/8'])).toEqual([]);
  });

  it('a bad subnet is named', () => {
    expect(() => filterAddresses(addrs, ['10.0.0.0/33'])).toThrow(/etcd subnet "10.0.0.0\/33" is not a CIDR/);
    expect(() => filterAddresses(addrs, ['!nope'])).toThrow(/etcd subnet "!nope"/);
  });
});

describe('etcd addresses (Talos etcd SpecController)', () => {
  const addrs = ['10.0.0.5', '192.168.1.1', '192.168.1.50', '2001:db8::7334', '2002:db8::7335'];
  const none = { advertisedSubnets: [], listenSubnets: [] };

  it('defaults: the first routable address advertised, every address listened on', () => {
    expect(etcdAddresses(addrs, none)).toEqual({ advertised: ['10.0.0.5'], listenPeer: ['0.0.0.0'], listenClient: ['0.0.0.0'] });
    expect(etcdAddresses(nodeAddresses(ifaces), none)?.advertised).toEqual(['10.0.2.15']);
  });

  it('advertisedSubnets: every address they select, and listen on them (and loopback for clients)', () => {
    expect(etcdAddresses(addrs, { advertisedSubnets: ['192.168.0.0/16', '2001::/16'], listenSubnets: [] })).toEqual({
      advertised: ['192.168.1.1', '192.168.1.50', '2001:db8::7334'],
      listenPeer: ['192.168.1.1', '192.168.1.50', '2001:db8::7334'],
      listenClient: ['127.0.0.1', '192.168.1.1', '192.168.1.50', '2001:db8::7334'],
    });
    expect(etcdAddresses(addrs, { advertisedSubnets: ['192.168.0.0/16', '!192.168.1.50'], listenSubnets: [] })?.advertised).toEqual(['192.168.1.1']);
    expect(etcdAddresses(nodeAddresses(ifaces), { advertisedSubnets: ['10.5.0.0/24'], listenSubnets: [] })?.advertised).toEqual(['10.5.0.5']);
  });

  it('listenSubnets apart from advertisedSubnets', () => {
    expect(etcdAddresses(addrs, { advertisedSubnets: ['192.168.0.0/16', '2001::/16'], listenSubnets: ['192.168.0.0/16'] })).toEqual({
      advertised: ['192.168.1.1', '192.168.1.50', '2001:db8::7334'],
      listenPeer: ['192.168.1.1', '192.168.1.50'],
      listenClient: ['127.0.0.1', '192.168.1.1', '192.168.1.50'],
    });
    expect(etcdAddresses(addrs, { advertisedSubnets: [], listenSubnets: ['10.0.0.0/8'] })).toEqual({
      advertised: ['10.0.0.5'],
      listenPeer: ['10.0.0.5'],
      listenClient: ['127.0.0.1', '10.0.0.5'],
    });
  });

  it('nothing selected (no address yet, or none in the subnets): wait', () => {
    expect(etcdAddresses([], none)).toBeUndefined();
    expect(etcdAddresses(addrs, { advertisedSubnets: ['172.16.0.0/12'], listenSubnets: [] })).toBeUndefined();
    expect(etcdAddresses(addrs, { advertisedSubnets: [], listenSubnets: ['172.16.0.0/12'] })).toBeUndefined();
    expect(etcdAddresses(addrs, { advertisedSubnets: ['!10.0.0.0/8'], listenSubnets: [] })).toBeUndefined();
  });
});
