// Settings precedence: configuration over DHCP over defaults, leases in the order given.
import { describe, expect, it } from 'vitest';
import type { Lease } from './dhcp/client.ts';
import type { DhcpOptions } from './dhcp/packet.ts';
import { effectiveConfig, hostnameOf, leaseRoutes, resolversOf, timeServersOf } from './precedence.ts';
import { parseKernelNetworkArgs } from './config.ts';
import { RT_SCOPE } from './netlink.ts';

const defaults = { hostname: 'talos-abc', nameservers: ['1.1.1.1', '8.8.8.8'], timeServers: ['time.cloudflare.com'] };
const lease = (address: string, prefixLength: number, o: Partial<DhcpOptions> = {}): Lease => ({
  address, prefixLength, serverId: '10.0.0.1', leaseTime: 3600, renewalTime: 1800, rebindingTime: 3150, obtainedAt: 0,
  options: { routers: [], dnsServers: [], ntpServers: [], searchDomains: [], classlessRoutes: [], ...o },
});

describe('settings precedence', () => {
  it('takes the configuration first, then DHCP (first lease first), then the defaults', () => {
    const leases = [lease('10.0.0.5', 24, { hostname: 'dhcp-host', domainName: 'lan', dnsServers: ['10.0.0.53'], ntpServers: ['10.0.0.123'] }), lease('10.1.0.5', 24, { hostname: 'second', dnsServers: ['10.1.0.53', '10.0.0.53'] })];
    expect(hostnameOf({ hostname: 'node-1.example.org' }, leases, defaults)).toEqual({ hostname: 'node-1', domainname: 'example.org' });
    expect(hostnameOf({}, leases, defaults)).toEqual({ hostname: 'dhcp-host', domainname: 'lan' });
    expect(hostnameOf({}, [], defaults)).toEqual({ hostname: 'talos-abc', domainname: '' });
    expect(resolversOf({ nameservers: ['9.9.9.9'] }, leases, defaults)).toEqual({ dnsServers: ['9.9.9.9'], searchDomains: ['lan'] });
    expect(resolversOf({}, leases, defaults).dnsServers).toEqual(['10.0.0.53', '10.1.0.53']);
    expect(resolversOf({}, [], defaults)).toEqual({ dnsServers: ['1.1.1.1', '8.8.8.8'], searchDomains: [] });
    expect(resolversOf({ hostname: 'n.corp.example' }, [], defaults).searchDomains).toEqual(['corp.example']);
    expect(timeServersOf({ timeServers: ['pool.ntp.org'] }, leases, defaults)).toEqual(['pool.ntp.org']);
    expect(timeServersOf({}, leases, defaults)).toEqual(['10.0.0.123']);
    expect(timeServersOf({}, [], defaults)).toEqual(['time.cloudflare.com']);
  });

  it('puts the configuration over the kernel arguments, and says what is wrong in them', () => {
    const k = parseKernelNetworkArgs('ip=10.0.0.9::10.0.0.1:255.255.255.0:kernel-host:eth0:off');
    const eff = effectiveConfig(k, { hostname: 'configured' });
    expect(eff.config.hostname).toBe('configured');
    expect(effectiveConfig(k, {}).config.hostname).toBe('kernel-host');
  });

  it('routes a lease: classless routes over the router option, a host route to an off-link router', () => {
    expect(leaseRoutes(lease('10.0.0.5', 24, { routers: ['10.0.0.1'] }))).toEqual([{ dst: '0.0.0.0/0', gateway: '10.0.0.1' }]);
    expect(leaseRoutes(lease('10.0.0.5', 32, { routers: ['10.0.0.1'] }))).toEqual([{ dst: '10.0.0.1/32', scope: RT_SCOPE.LINK }, { dst: '0.0.0.0/0', gateway: '10.0.0.1' }]);
    expect(
      leaseRoutes(lease('10.0.0.5', 24, { routers: ['10.0.0.1'], classlessRoutes: [{ destination: '192.168.0.0/16', router: '10.0.0.2' }, { destination: '10.9.0.0/16', router: '0.0.0.0' }] })),
    ).toEqual([{ dst: '192.168.0.0/16', gateway: '10.0.0.2' }, { dst: '10.9.0.0/16', scope: RT_SCOPE.LINK }]);
  });
});
