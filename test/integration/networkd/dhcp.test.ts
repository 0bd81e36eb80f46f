// The DHCPv4 client and NetworkManager against a real dnsmasq: the server in one network
// namespace, networkd (the agent) in another, a veth pair between them. The lease is 2 minutes
// (dnsmasq's minimum) with T1 = 4 s and T2 = 7 s so renewal and rebinding happen within the
// test; lease expiry itself is covered by the client's unit tests with a fake clock.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, type AgentEvent, Dnsmasq, Netns, requireTools, vethPair } from './netns.ts';

const CLIENT_MAC = '02:42:ac:63:00:02';
const T1 = 4;
const T2 = 7;

describe('DHCP against dnsmasq, between network namespaces', () => {
  let server: Netns;
  let client: Netns;
  let agent: Agent;
  let dnsmasq: Dnsmasq;
  let dir: string;
  let address = '';
  const dnsmasqArgs = [
    '--interface=vs',
    '--bind-interfaces',
    '--dhcp-range=10.99.0.50,10.99.0.99,255.255.255.0,2m',
    '--dhcp-option=option:router,10.99.0.1',
    '--dhcp-option=option:dns-server,10.99.0.53,10.99.0.54',
    '--dhcp-option=option:domain-name,bronze.test',
    '--dhcp-option=option:ntp-server,10.99.0.123',
    '--dhcp-option=option:mtu,1400',
    `--dhcp-option=option:T1,${T1}`,
    `--dhcp-option=option:T2,${T2}`,
    `--dhcp-host=${CLIENT_MAC},node-a`,
  ];
  const dhcpEvents = (from = 0) => agent.events.slice(from).filter((e) => e.event === 'dhcp' && e.link === 'vc');
  const bound = (via: string) => (e: AgentEvent) => e.event === 'dhcp' && e.link === 'vc' && e.ev.type === 'bound' && e.ev.via === via;
  const state = (s: string) => (e: AgentEvent) => e.event === 'dhcp' && e.link === 'vc' && e.ev.type === 'state' && e.ev.state === s;
  const vcAddresses = () => (client.ipJson('addr', 'show', 'dev', 'vc')[0].addr_info as any[]).filter((a) => a.family === 'inet');

  beforeAll(async () => {
    requireTools('ip', 'dnsmasq');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-dhcp-'));
    server = new Netns('dhcps');
    client = new Netns('dhcpc');
    vethPair(server, 'vs', client, 'vc', CLIENT_MAC);
    server.ip('addr', 'add', '10.99.0.1/24', 'dev', 'vs');
    server.ip('link', 'set', 'vs', 'up');
    server.ip('link', 'set', 'lo', 'up');
    dnsmasq = new Dnsmasq(server, dir, dnsmasqArgs).start();
    agent = new Agent(client);
    await agent.waitEvent((e) => e.event === 'ready', 20_000, 0, 'agent start');
    await agent.call('manager.start', {
      dir,
      config: {
        interfaces: [
          { interface: 'vc', dhcp: true, vlans: [{ vlanId: 10, addresses: ['10.99.10.2/24'] }] },
          { interface: 'nope0', addresses: ['10.99.20.2/24'] },
        ],
      },
      dhcp: { initialTimeoutMs: 1000, maxTimeoutMs: 2000, jitterMs: 100, minRetryMs: 500, maxRetryMs: 1000 },
    });
  }, 40_000);

  afterAll(async () => {
    await Agent.closeAll();
    await Dnsmasq.stopAll();
    Netns.deleteAll();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('obtains a lease, parses its options and applies address, default route and MTU', async () => {
    const ev = await agent.waitEvent(bound('requesting'), 15_000, 0, 'first lease');
    const lease = ev.ev.lease;
    address = lease.address;
    expect(address).toMatch(/^10\.99\.0\.(5\d|[6-9]\d)$/);
    expect(lease).toMatchObject({ prefixLength: 24, serverId: '10.99.0.1', leaseTime: 120, renewalTime: T1, rebindingTime: T2 });
    expect(lease.options).toMatchObject({
      subnetMask: '255.255.255.0',
      routers: ['10.99.0.1'],
      dnsServers: ['10.99.0.53', '10.99.0.54'],
      domainName: 'bronze.test',
      hostname: 'node-a',
      ntpServers: ['10.99.0.123'],
      mtu: 1400,
    });
    await agent.call('manager.status'); // settles

    const v4 = vcAddresses().find((a) => a.local === address);
    expect(v4).toMatchObject({ prefixlen: 24, dynamic: true });
    expect(v4.valid_life_time).toBeGreaterThan(100);
    expect(v4.valid_life_time).toBeLessThanOrEqual(120);
    expect(client.ipJson('route', 'show')).toEqual(
      expect.arrayContaining([expect.objectContaining({ dst: 'default', gateway: '10.99.0.1', dev: 'vc', protocol: 'dhcp', metric: 1024, prefsrc: address })]),
    );
    expect(client.ipJson('link', 'show', 'vc')[0].mtu).toBe(1400);
  }, 20_000);

  it('publishes links, addresses, routes, resolvers, hostname and time servers, and writes resolv.conf and hosts', async () => {
    const resources = async (type: string) => Object.fromEntries((await agent.call<any[]>('manager.resources', { type })).map((r) => [r.id, r.spec]));
    const links = await resources('LinkStatuses.net.talos.dev');
    expect(links.vc).toMatchObject({ kind: 'veth', mtu: 1400, flags: expect.stringMatching(/^UP,/), hardwareAddr: CLIENT_MAC, type: 'ether' });
    expect(links.lo).toMatchObject({ type: 'loopback', flags: expect.stringMatching(/^UP,LOOPBACK/) });
    const addresses = await resources('AddressStatuses.net.talos.dev');
    expect(addresses[`vc/${address}/24`]).toMatchObject({ address: `${address}/24`, linkName: 'vc', family: 'inet4', scope: 'global' });
    const routes = await resources('RouteStatuses.net.talos.dev');
    expect(routes['inet4/10.99.0.1//1024']).toMatchObject({ dst: '', gateway: '10.99.0.1', outLinkName: 'vc', protocol: 'dhcp', table: 'main' });
    expect(await resources('ResolverStatuses.net.talos.dev')).toEqual({ resolvers: { dnsServers: ['10.99.0.53', '10.99.0.54'], searchDomains: ['bronze.test'] } });
    expect(await resources('HostnameStatuses.net.talos.dev')).toEqual({ hostname: { hostname: 'node-a', domainname: 'bronze.test' } });
    expect(await resources('TimeServerStatuses.net.talos.dev')).toEqual({ timeservers: { timeServers: ['10.99.0.123'] } });
    expect((await resources('NodeAddresses.net.talos.dev')).default).toEqual({ addresses: [`${address}/24`] });
    expect(agent.events.some((e) => e.event === 'sethostname' && e.name === 'node-a')).toBe(true);

    const resolv = fs.readFileSync(path.join(dir, 'resolv.conf'), 'utf8');
    expect(resolv).toContain('nameserver 10.99.0.53\nnameserver 10.99.0.54\nsearch bronze.test\n');
    const hosts = fs.readFileSync(path.join(dir, 'hosts'), 'utf8');
    expect(hosts).toContain(`${address}\tnode-a.bronze.test node-a\n`);
    expect(hosts).toContain('127.0.0.1\tlocalhost\n');
  });

  it('reports problems per interface and keeps going: a missing link, a VLAN the kernel may refuse', async () => {
    const status = await agent.call<any>('manager.status');
    const byName = Object.fromEntries(status.interfaces.map((i: any) => [i.name, i]));
    expect(byName.nope0.state).toBe('waiting');
    expect(byName.vc.state).toBe('configured');
    expect(byName.vc.dhcp).toMatchObject({ state: 'bound', address: `${address}/24`, serverId: '10.99.0.1' });
    const vlan = byName['vc.10'];
    if (vlan.state === 'error') {
      expect(vlan.errors.at(-1).message).toMatch(/create vlan link vc\.10: (ENOTSUP|EOPNOTSUPP)/);
    } else {
      expect(vlan.state).toBe('configured');
      expect(client.ipJson('-d', 'link', 'show', 'vc.10')[0].linkinfo.info_data.id).toBe(10);
    }
  });

  it('drops malformed packets sent to port 68, counting them', async () => {
    const script = `
      const s = require('dgram').createSocket('udp4');
      const pkts = [Buffer.from('garbage'), Buffer.alloc(300, 0xff), Buffer.concat([Buffer.from([2,1,6,0]), Buffer.alloc(232), Buffer.from([0x63,0x82,0x53,0x63,53,9,5])])];
      let n = 0;
      for (const p of pkts) s.send(p, 68, '${address}', () => { if (++n === pkts.length) s.close(); });`;
    server.exec(path.resolve('node_modules/.bin/node'), '-e', script);
    const deadline = Date.now() + 5000;
    let counters: any;
    do {
      await new Promise((r) => setTimeout(r, 100));
      counters = (await agent.call<any>('manager.status')).interfaces.find((i: any) => i.name === 'vc').dhcp.counters;
    } while (counters.malformed < 3 && Date.now() < deadline);
    expect(counters.malformed).toBeGreaterThanOrEqual(3);
    expect((await agent.call<any>('manager.status')).interfaces.find((i: any) => i.name === 'vc').dhcp.state).toMatch(/bound|renewing/);
  });

  it('renews at T1 by unicast to the server', async () => {
    const ev = await agent.waitEvent(bound('renewing'), (T1 + 5) * 1000, 0, 'renewal');
    expect(ev.ev.lease.address).toBe(address);
    await dnsmasq.waitLog(new RegExp(`DHCPREQUEST\\(vs\\) ${address.replace(/\./g, '\\.')}[\\s\\S]*DHCPACK\\(vs\\) ${address.replace(/\./g, '\\.')}[\\s\\S]*DHCPACK\\(vs\\) ${address.replace(/\./g, '\\.')}`), 3000);
    expect(dnsmasq.leases()).toContain(address);
  }, 15_000);

  it('keeps the lease while the server is gone, retries, then rebinds when it is back', async () => {
    await dnsmasq.stop();
    const from = agent.events.length;
    await agent.waitEvent(state('renewing'), (T1 + 3) * 1000, from, 'RENEWING without a server');
    await agent.waitEvent(state('rebinding'), (T2 - T1 + 3) * 1000, from, 'REBINDING');
    // Still holding the address, and still asking.
    expect(vcAddresses().some((a) => a.local === address)).toBe(true);
    const sentBefore = (await agent.call<any>('manager.status')).interfaces.find((i: any) => i.name === 'vc').dhcp.counters.sent;
    await new Promise((r) => setTimeout(r, 1500));
    const sentAfter = (await agent.call<any>('manager.status')).interfaces.find((i: any) => i.name === 'vc').dhcp.counters.sent;
    expect(sentAfter).toBeGreaterThan(sentBefore);
    expect(dhcpEvents(from).some((e) => e.ev.type === 'expired')).toBe(false);

    dnsmasq = new Dnsmasq(server, dir, dnsmasqArgs).start();
    const ev = await agent.waitEvent(bound('rebinding'), 8000, from, 'rebinding ACK');
    expect(ev.ev.lease.address).toBe(address);
    expect(vcAddresses().some((a) => a.local === address)).toBe(true);
  }, 25_000);

  it('releases the lease on shutdown and removes the address and route', async () => {
    await agent.call('manager.stop', { release: true });
    await dnsmasq.waitLog(new RegExp(`DHCPRELEASE\\(vs\\) ${address.replace(/\./g, '\\.')}`), 3000);
    expect(vcAddresses().some((a) => a.local === address)).toBe(false);
    expect(client.ipJson('route', 'show').some((r: any) => r.dst === 'default')).toBe(false);
  });
});
