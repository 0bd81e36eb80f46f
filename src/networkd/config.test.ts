import { describe, expect, it } from 'vitest';
import { kernelArgsToConfig, mergeConfigs, parseIpArg, parseKernelNetworkArgs } from './config.ts';

describe('kernel arguments', () => {
  it('parses the full ip= form of the kernel documentation', () => {
    expect(parseIpArg('172.20.0.2::172.20.0.1:255.255.255.0:node1:eth0:off:10.0.0.53:10.0.0.54:10.0.0.123')).toEqual({
      clientIp: '172.20.0.2',
      gateway: '172.20.0.1',
      netmask: '255.255.255.0',
      hostname: 'node1',
      device: 'eth0',
      autoconf: 'off',
      dns: ['10.0.0.53', '10.0.0.54'],
      ntp: ['10.0.0.123'],
    });
  });

  it('parses partial forms, bracketed IPv6 and the one-word forms', () => {
    expect(parseIpArg(':::::::1.1.1.1:8.8.8.8:pool.ntp.org'.replace('pool.ntp.org', '10.1.1.1'))).toEqual({ dns: ['1.1.1.1', '8.8.8.8'], ntp: ['10.1.1.1'] });
    expect(parseIpArg('[2001:db8::a]::[2001:db8::1]:64::eth1')).toMatchObject({ clientIp: '2001:db8::a', gateway: '2001:db8::1', netmask: '64', device: 'eth1' });
    expect(parseIpArg('dhcp')).toEqual({ autoconf: 'dhcp', dns: [], ntp: [] });
    expect(parseIpArg(':::::eth0:dhcp')).toEqual({ device: 'eth0', autoconf: 'dhcp', dns: [], ntp: [] });
    expect(() => parseIpArg('not-an-ip::')).toThrow();
    expect(() => parseIpArg('10.0.0.2:::255.0.255.0::eth0')).toThrow(/contiguous/);
  });

  it('collects every ip=, the ignore list and bronze.hostname from a command line', () => {
    const k = parseKernelNetworkArgs(
      'console=ttyS0 ip=10.0.0.2::10.0.0.1:24::eth0:off ip=:::::eth1:dhcp bronze.network.interface.ignore=eth2 bronze.network.interface.ignore=eth3,eth4 bronze.hostname=n1 ip=bogus::x',
    );
    expect(k.ip).toHaveLength(2);
    expect(k.ignore).toEqual(['eth2', 'eth3', 'eth4']);
    expect(k.hostname).toBe('n1');
    expect(k.errors).toHaveLength(1);
    expect(k.errors[0]).toMatch(/^ip=bogus::x: /);
  });

  it('turns kernel arguments into a NetworkConfig', () => {
    const { config, defaultDhcp, errors } = kernelArgsToConfig(
      parseKernelNetworkArgs('ip=10.0.0.2::10.0.0.1:255.255.255.0:node1:eth0:off:10.0.0.53::10.0.0.123 ip=:::::eth1:dhcp bronze.network.interface.ignore=eth9'),
    );
    expect(errors).toEqual([]);
    expect(defaultDhcp).toBeUndefined();
    expect(config).toEqual({
      hostname: 'node1',
      interfaces: [
        { interface: 'eth0', addresses: ['10.0.0.2/24'], routes: [{ network: '0.0.0.0/0', gateway: '10.0.0.1' }] },
        { interface: 'eth1', dhcp: true },
      ],
      nameservers: ['10.0.0.53'],
      timeServers: ['10.0.0.123'],
      ignore: ['eth9'],
    });
    expect(kernelArgsToConfig(parseKernelNetworkArgs('ip=dhcp')).defaultDhcp).toBe(true);
    expect(kernelArgsToConfig(parseKernelNetworkArgs('ip=off')).defaultDhcp).toBe(false);
    expect(kernelArgsToConfig(parseKernelNetworkArgs('ip=10.0.0.2')).errors[0]).toMatch(/needs a device/);
  });

  it('lets the machine configuration override kernel arguments per interface', () => {
    const merged = mergeConfigs(
      { interfaces: [{ interface: 'eth0', addresses: ['10.0.0.2/24'] }, { interface: 'eth1', dhcp: true }], nameservers: ['1.1.1.1'], ignore: ['eth8'] },
      { interfaces: [{ interface: 'eth0', dhcp: true }], ignore: ['eth9'], hostname: 'cfg' },
    );
    expect(merged).toEqual({
      interfaces: [{ interface: 'eth0', dhcp: true }, { interface: 'eth1', dhcp: true }],
      nameservers: ['1.1.1.1'],
      ignore: ['eth8', 'eth9'],
      hostname: 'cfg',
    });
  });
});

