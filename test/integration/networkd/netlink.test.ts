// rtnetlink through koffi, for real: an agent process inside a fresh network namespace drives
// Rtnl; `ip -j` from outside checks what the kernel did.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { virtualLinkData } from '../../../src/networkd/virtual-links.ts';
import { Agent, Netns, requireTools, sh, vethPair } from './netns.ts';

describe('rtnetlink in a network namespace', () => {
  let ns: Netns;
  let agent: Agent;

  beforeAll(async () => {
    requireTools('ip');
    ns = new Netns('nl');
    vethPair(ns, 'va', ns, 'vb');
    agent = new Agent(ns);
    await agent.waitEvent((e) => e.event === 'ready', 20_000, 0, 'agent start');
  }, 30_000);

  afterAll(async () => {
    await Agent.closeAll();
    Netns.deleteAll();
  });

  it('lists links with index, MAC, MTU, flags and kind', async () => {
    const links = await agent.call<any[]>('rtnl.listLinks');
    const ipLinks = ns.ipJson('-d', 'link', 'show');
    expect(links.map((l) => l.name).sort()).toEqual(ipLinks.map((l: any) => l.ifname).sort());
    const va = links.find((l) => l.name === 'va');
    const ipVa = ipLinks.find((l: any) => l.ifname === 'va');
    expect(va).toMatchObject({ index: ipVa.ifindex, mac: ipVa.address, mtu: ipVa.mtu, kind: 'veth', up: false, typeName: 'ether' });
    expect(va.parent).toBe(links.find((l) => l.name === 'vb').index);
    expect(links.find((l) => l.name === 'lo')).toMatchObject({ loopback: true, typeName: 'loopback' });
  });

  it('sets links up and down and changes the MTU', async () => {
    await agent.call('rtnl.setLinkUp', 'va');
    await agent.call('rtnl.setLinkUp', 'vb', true);
    await agent.call('rtnl.setMtu', 'va', 1400);
    let va = ns.ipJson('link', 'show', 'va')[0];
    expect(va.flags).toContain('UP');
    expect(va.mtu).toBe(1400);
    await agent.call('rtnl.setLinkUp', 'va', false);
    va = ns.ipJson('link', 'show', 'va')[0];
    expect(va.flags).not.toContain('UP');
    await agent.call('rtnl.setLinkUp', 'va', true);
    const got = await agent.call<any>('rtnl.getLink', 'va');
    expect(got).toMatchObject({ name: 'va', up: true, mtu: 1400 });
  });

  it('subscribes to changes, adds, lists and deletes IPv4 and IPv6 addresses', async () => {
    await agent.call('subscribe');
    const from = agent.events.length;
    await agent.call('rtnl.addAddress', 'va', { address: '10.98.0.2/24', validLifetime: 300, preferredLifetime: 200 });
    await agent.call('rtnl.addAddress', 'va', { address: '2001:db8:98::2/64', flags: 0x2 /* NODAD */ });
    const info = ns.ipJson('addr', 'show', 'dev', 'va')[0].addr_info as any[];
    const v4 = info.find((a) => a.local === '10.98.0.2');
    expect(v4).toMatchObject({ family: 'inet', prefixlen: 24, broadcast: '10.98.0.255' });
    expect(v4.valid_life_time).toBeGreaterThan(290);
    expect(v4.valid_life_time).toBeLessThanOrEqual(300);
    expect(info.find((a) => a.local === '2001:db8:98::2')).toMatchObject({ family: 'inet6', prefixlen: 64 });

    const listed = await agent.call<any[]>('rtnl.listAddresses');
    expect(listed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ address: '10.98.0.2', prefixLength: 24, family: 'inet4' }),
        expect.objectContaining({ address: '2001:db8:98::2', prefixLength: 64, family: 'inet6' }),
      ]),
    );
    // The subscription saw the new address; one added from outside shows up too.
    await agent.waitEvent((e) => e.event === 'rtnl' && e.ev.kind === 'address' && e.ev.address.address === '10.98.0.2', 5000, from, 'RTM_NEWADDR');
    ns.ip('addr', 'add', '10.98.1.7/24', 'dev', 'vb');
    await agent.waitEvent((e) => e.event === 'rtnl' && e.ev.action === 'new' && e.ev.address?.address === '10.98.1.7', 5000, from, 'outside RTM_NEWADDR');

    // Duplicates are refused with the errno's name and the operation.
    await expect(agent.call('rtnl.addAddress', 'va', { address: '10.98.0.2/24' })).rejects.toMatchObject({
      code: 'EEXIST',
      operation: 'add address 10.98.0.2/24 to va',
    });
    // Replace updates the lifetime in place.
    await agent.call('rtnl.addAddress', 'va', { address: '10.98.0.2/24', validLifetime: 100, replace: true });
    expect(ns.ipJson('addr', 'show', 'dev', 'va')[0].addr_info.find((a: any) => a.local === '10.98.0.2').valid_life_time).toBeLessThanOrEqual(100);

    await agent.call('rtnl.deleteAddress', 'va', '2001:db8:98::2/64');
    expect((ns.ipJson('addr', 'show', 'dev', 'va')[0].addr_info as any[]).some((a) => a.local === '2001:db8:98::2')).toBe(false);
    await agent.waitEvent((e) => e.event === 'rtnl' && e.ev.action === 'del' && e.ev.address?.address === '2001:db8:98::2', 5000, from, 'RTM_DELADDR');
  });

  it('adds, lists and deletes routes: prefix via gateway, default with metric, IPv6', async () => {
    await agent.call('rtnl.addRoute', { dst: '10.97.0.0/16', gateway: '10.98.0.1', metric: 50 });
    await agent.call('rtnl.addRoute', { dst: 'default', gateway: '10.98.0.1', link: 'va', metric: 1024 });
    await agent.call('rtnl.addAddress', 'va', { address: '2001:db8:98::2/64', flags: 0x2 });
    await agent.call('rtnl.addRoute', { dst: '2001:db8:99::/48', gateway: '2001:db8:98::1', link: 'va' });
    const v4 = ns.ipJson('route', 'show');
    expect(v4).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ dst: '10.97.0.0/16', gateway: '10.98.0.1', dev: 'va', metric: 50, protocol: 'static' }),
        expect.objectContaining({ dst: 'default', gateway: '10.98.0.1', dev: 'va', metric: 1024 }),
      ]),
    );
    expect(ns.ipJson('-6', 'route', 'show')).toEqual(expect.arrayContaining([expect.objectContaining({ dst: '2001:db8:99::/48', gateway: '2001:db8:98::1' })]));

    const routes = await agent.call<any[]>('rtnl.listRoutes');
    expect(routes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ dst: '0.0.0.0/0', gateway: '10.98.0.1', priority: 1024, table: 254 }),
        expect.objectContaining({ dst: '10.97.0.0/16', priority: 50 }),
        expect.objectContaining({ family: 'inet6', dst: '2001:db8:99::/48', gateway: '2001:db8:98::1' }),
      ]),
    );

    await agent.call('rtnl.deleteRoute', { dst: 'default', gateway: '10.98.0.1', metric: 1024 });
    await agent.call('rtnl.deleteRoute', { dst: '10.97.0.0/16', gateway: '10.98.0.1', metric: 50 });
    await agent.call('rtnl.deleteRoute', { dst: '2001:db8:99::/48', family: 'inet6', gateway: '2001:db8:98::1' });
    expect(ns.ipJson('route', 'show').some((r: any) => r.dst === 'default' || r.dst === '10.97.0.0/16')).toBe(false);
    expect(ns.ipJson('-6', 'route', 'show').some((r: any) => r.dst === '2001:db8:99::/48')).toBe(false);
    await expect(agent.call('rtnl.deleteRoute', { dst: '10.97.0.0/16', gateway: '10.98.0.1', metric: 50 })).rejects.toMatchObject({ code: 'ESRCH' });
  });

  it('creates and deletes links through IFLA_LINKINFO: a VLAN (where the kernel has 802.1Q) and a macvlan', async () => {
    // This kernel may lack CONFIG_VLAN_8021Q; ask `ip` whether it can make one at all.
    let kernelHasVlan = true;
    try {
      ns.ip('link', 'add', 'link', 'vb', 'name', 'probe.9', 'type', 'vlan', 'id', '9');
      ns.ip('link', 'del', 'probe.9');
    } catch {
      kernelHasVlan = false;
    }
    if (kernelHasVlan) {
      await agent.call('rtnl.createVlan', { name: 'va.100', parent: 'va', id: 100 });
      const vlan = ns.ipJson('-d', 'link', 'show', 'va.100')[0];
      expect(vlan.linkinfo.info_kind).toBe('vlan');
      expect(vlan.linkinfo.info_data.id).toBe(100);
      expect(vlan.link).toBe('va');
      const listed = (await agent.call<any[]>('rtnl.listLinks')).find((l) => l.name === 'va.100');
      expect(listed).toMatchObject({ kind: 'vlan', vlan: { id: 100, protocol: '802.1Q' } });
      await agent.call('rtnl.deleteLink', 'va.100');
      expect(() => ns.ip('link', 'show', 'va.100')).toThrow();
    } else {
      // The request reaches the kernel and its refusal comes back named.
      await expect(agent.call('rtnl.createVlan', { name: 'va.100', parent: 'va', id: 100 })).rejects.toMatchObject({
        code: expect.stringMatching(/^(ENOTSUP|EOPNOTSUPP)$/),
        operation: 'create vlan link va.100',
      });
    }
    // The same IFLA_LINKINFO path with a kind every kernel here has.
    await agent.call('rtnl.createLink', { name: 'mv0', kind: 'macvlan', parent: 'va', data: [{ type: 1, value: { type: 'Buffer', data: [4, 0, 0, 0] } }] });
    const mv = ns.ipJson('-d', 'link', 'show', 'mv0')[0];
    expect(mv.linkinfo.info_kind).toBe('macvlan');
    expect(mv.linkinfo.info_data.mode).toBe('bridge');
    expect(mv.link).toBe('va');
    await expect(agent.call('rtnl.createLink', { name: 'mv0', kind: 'macvlan', parent: 'va' })).rejects.toMatchObject({ code: 'EEXIST' });
    await agent.call('rtnl.deleteLink', 'mv0');
    expect(ns.ipJson('link', 'show').some((l: any) => l.ifname === 'mv0')).toBe(false);
    await expect(agent.call('rtnl.deleteLink', 'nosuch0')).rejects.toMatchObject({ code: 'ENODEV' });
    expect(sh('ip', ['netns', 'list'])).toContain(ns.name);
  });

  it('creates a bridge with STP (BridgeConfig) and enslaves a link to it; a bond where the kernel has bonding', async () => {
    const data = (v: Parameters<typeof virtualLinkData>[0]) => JSON.parse(JSON.stringify(virtualLinkData(v)));
    await agent.call('rtnl.createLink', { name: 'br0', kind: 'bridge', data: data({ kind: 'bridge', options: { stp: true } }) });
    const br = ns.ipJson('-d', 'link', 'show', 'br0')[0];
    expect(br.linkinfo.info_kind).toBe('bridge');
    expect(br.linkinfo.info_data).toMatchObject({ stp_state: 1 });
    await agent.call('rtnl.setMaster', 'vb', br.ifindex);
    expect(ns.ipJson('link', 'show', 'vb')[0].master).toBe('br0');
    await agent.call('rtnl.setMaster', 'vb', 0);
    expect(ns.ipJson('link', 'show', 'vb')[0].master).toBeUndefined();
    // The options of a link that exists already (as the bonding driver's own bond0).
    await agent.call('rtnl.changeLinkInfo', 'br0', 'bridge', data({ kind: 'bridge', options: { stp: false } }));
    expect(ns.ipJson('-d', 'link', 'show', 'br0')[0].linkinfo.info_data.stp_state).toBe(0);
    await agent.call('rtnl.deleteLink', 'br0');

    // The host's kernel may lack CONFIG_BONDING (Bronze's has it): ask `ip` first.
    let kernelHasBond = true;
    try {
      ns.ip('link', 'add', 'probe-bond', 'type', 'bond');
      ns.ip('link', 'del', 'probe-bond');
    } catch {
      kernelHasBond = false;
    }
    const bond = data({ kind: 'bond', options: { bondMode: '802.3ad', miimon: 100, lacpRate: 'fast', xmitHashPolicy: 'layer3+4', adActorSysPrio: 65535 } });
    if (!kernelHasBond) {
      await expect(agent.call('rtnl.createLink', { name: 'bond0', kind: 'bond', data: bond })).rejects.toMatchObject({ code: expect.stringMatching(/^(ENOTSUP|EOPNOTSUPP)$/) });
      return;
    }
    await agent.call('rtnl.createLink', { name: 'bond0', kind: 'bond', data: bond });
    const b = ns.ipJson('-d', 'link', 'show', 'bond0')[0];
    expect(b.linkinfo.info_data).toMatchObject({ mode: '802.3ad', miimon: 100, ad_lacp_rate: 'fast', xmit_hash_policy: 'layer3+4', ad_actor_sys_prio: 65535 });
    await agent.call('rtnl.setLinkUp', 'vb', false);
    await agent.call('rtnl.setMaster', 'vb', b.ifindex);
    expect(ns.ipJson('link', 'show', 'vb')[0].master).toBe('bond0');
    await agent.call('rtnl.deleteLink', 'bond0');
  });
});

