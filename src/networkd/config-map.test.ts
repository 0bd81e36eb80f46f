import { describe, expect, it } from 'vitest';
import { typedConfig } from '../config/testing.ts';
import { networkConfigOf } from './config-map.ts';

describe('network configuration from the machine configuration', () => {
  it('takes machine.network and lets the typed documents replace parts of it', () => {
    const cfg = networkConfigOf(typedConfig(
      { machine: { network: { hostname: 'a', nameservers: ['1.1.1.1'], interfaces: [{ interface: 'eth0', dhcp: true }] }, time: { servers: ['ntp.example'] } } },
      [
        { kind: 'HostnameConfig', hostname: 'b' },
        { kind: 'ResolverConfig', nameservers: [{ address: '9.9.9.9' }] },
        { kind: 'LinkConfig', name: 'eth1', addresses: [{ address: '10.9.0.2/24' }], routes: [{ gateway: '10.9.0.1' }], mtu: 1400 },
      ],
    ));
    expect(cfg).toEqual({
      hostname: 'b',
      nameservers: ['9.9.9.9'],
      timeServers: ['ntp.example'],
      interfaces: [{ interface: 'eth0', dhcp: true }, { interface: 'eth1', addresses: ['10.9.0.2/24'], routes: [{ network: '0.0.0.0/0', gateway: '10.9.0.1' }], mtu: 1400 }],
    });
    expect(networkConfigOf(undefined)).toEqual({});
  });

  it('adds StaticHostConfig entries to the hosts file and DHCPv4Config options to the link', () => {
    const cfg = networkConfigOf(typedConfig(
      { machine: { network: { extraHostEntries: [{ ip: '10.0.0.9', aliases: ['db'] }] } } },
      [
        { kind: 'StaticHostConfig', name: '10.5.0.2', hostnames: ['registry.lan', 'registry'] },
        { kind: 'DHCPv4Config', name: 'eth1', routeMetric: 2048, ignoreRoutes: true },
        { kind: 'DHCPv4Config', name: 'eth2' },
      ],
    ));
    expect(cfg.extraHostEntries).toEqual([
      { ip: '10.0.0.9', aliases: ['db'] },
      { ip: '10.5.0.2', aliases: ['registry.lan', 'registry'] },
    ]);
    expect(cfg.interfaces).toEqual([
      { interface: 'eth1', dhcp: true, dhcpOptions: { routeMetric: 2048, ignoreRoutes: true } },
      { interface: 'eth2', dhcp: true },
    ]);
  });

  it('turns BondConfig and BridgeConfig into links to create, with their members', () => {
    const cfg = networkConfigOf(typedConfig(
      undefined,
      [
        { kind: 'BondConfig', name: 'bond0', links: ['eth1', 'eth2'], bondMode: '802.3ad', miimon: 100, lacpRate: 'fast', addresses: [{ address: '10.15.0.3/16' }], routes: [{ gateway: '10.15.0.1' }], mtu: 9000 },
        { kind: 'BridgeConfig', name: 'br0', links: ['eth3'], stp: { enabled: true }, hardwareAddr: '2e:3c:4d:5e:6f:70' },
        { kind: 'DHCPv4Config', name: 'br0' },
      ],
    ));
    expect(cfg.interfaces).toEqual([
      { interface: 'bond0', virtual: { kind: 'bond', options: { bondMode: '802.3ad', miimon: 100, lacpRate: 'fast' } }, addresses: ['10.15.0.3/16'], routes: [{ network: '0.0.0.0/0', gateway: '10.15.0.1' }], mtu: 9000 },
      { interface: 'eth1', master: 'bond0' },
      { interface: 'eth2', master: 'bond0' },
      { interface: 'br0', virtual: { kind: 'bridge', options: { stp: true }, mac: '2e:3c:4d:5e:6f:70' }, dhcp: true },
      { interface: 'eth3', master: 'br0' },
    ]);
  });
});
