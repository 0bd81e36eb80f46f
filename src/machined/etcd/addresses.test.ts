import type os from 'node:os';
import { describe, expect, it } from 'vitest';
import { addressTowards, advertiseAddress, nodeAddresses } from './addresses.ts';

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

  it('etcd advertises the first within advertisedSubnets', () => {
    expect(advertiseAddress([], ifaces)).toBe('10.0.2.15');
    expect(advertiseAddress(['10.5.0.0/24'], ifaces)).toBe('10.5.0.5');
    expect(advertiseAddress(['!10.0.2.0/24'], ifaces)).toBe('10.5.0.5');
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
