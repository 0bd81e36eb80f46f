// NetworkManager over a fake kernel (an in-memory rtnetlink that emits events like the real
// one) and a scripted DHCP server: the rules for what is configured, published and written.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StatePublisher } from '../daemon/publisher.ts';
import type { Logger } from '../lib/log.ts';
import { MemoryState } from '../state/memory.ts';
import type { DhcpTransport } from './dhcp/client.ts';
import { BOOTREPLY, MessageType, Opt, decodePacket, encodePacket, opt } from './dhcp/packet.ts';
import { type RtnlOps, NetworkManager, type NetworkManagerOptions } from './manager.ts';
import { type Address, type Link, type Route, type RtnlEvent, RTPROT } from './netlink.ts';
import { NetlinkError, type SubscriptionHandlers } from './rtnl.ts';
import { parseCidr } from '../lib/ip.ts';

function mkLink(index: number, name: string, extra: Partial<Link> = {}): Link {
  return {
    index,
    name,
    type: 1,
    typeName: 'ether',
    mac: `52:54:00:00:00:${index.toString(16).padStart(2, '0')}`,
    broadcast: 'ff:ff:ff:ff:ff:ff',
    mtu: 1500,
    flags: 0,
    up: false,
    running: false,
    lowerUp: false,
    loopback: false,
    operState: 'down',
    ...extra,
  };
}

class FakeRtnl implements RtnlOps {
  readonly counters = { malformed: 0, stray: 0 };
  links: Link[] = [];
  addresses: Address[] = [];
  routes: Route[] = [];
  calls: string[] = [];
  fail = new Map<string, string>();
  h: SubscriptionHandlers | undefined;

  emit(ev: RtnlEvent) {
    this.h?.onEvent(ev);
  }
  #failIf(op: string) {
    this.calls.push(op);
    for (const [prefix, code] of this.fail) {
      if (op.startsWith(prefix)) {
        const e = new NetlinkError(op, 1);
        Object.defineProperty(e, 'code', { value: code });
        e.message = `${op}: ${code}`;
        throw e;
      }
    }
  }
  #link(ref: string | number): Link {
    const l = this.links.find((x) => x.index === ref || x.name === ref);
    if (!l) throw new NetlinkError(`link ${ref}`, 19);
    return l;
  }
  addLink(l: Link) {
    this.links.push(l);
    this.emit({ kind: 'link', action: 'new', link: l });
  }
  async listLinks() {
    return structuredClone(this.links);
  }
  async listAddresses() {
    return structuredClone(this.addresses);
  }
  async listRoutes() {
    return structuredClone(this.routes);
  }
  async setLinkUp(ref: string | number, up = true) {
    const l = this.#link(ref);
    this.#failIf(`up ${l.name}`);
    l.up = up;
    this.emit({ kind: 'link', action: 'new', link: { ...l } });
  }
  async setMtu(ref: string | number, mtu: number) {
    const l = this.#link(ref);
    this.#failIf(`mtu ${l.name} ${mtu}`);
    l.mtu = mtu;
    this.emit({ kind: 'link', action: 'new', link: { ...l } });
  }
  async createVlan(v: { name: string; parent: string | number; id: number }) {
    this.#failIf(`vlan ${v.name}`);
    const parent = this.#link(v.parent);
    this.addLink(mkLink(100 + v.id, v.name, { kind: 'vlan', parent: parent.index, vlan: { id: v.id, protocol: '802.1Q' } }));
  }
  async createLink(spec: { name: string; kind: string; data?: unknown[] }) {
    this.#failIf(`create ${spec.kind} ${spec.name} (${spec.data?.length ?? 0} options)`);
    this.addLink(mkLink(200 + this.links.length, spec.name, { kind: spec.kind }));
  }
  async changeLinkInfo(ref: string | number, kind: string, data: unknown[]) {
    const l = this.#link(ref);
    this.#failIf(`change ${kind} ${l.name} (${data.length} options)${l.up ? ' (while up)' : ''}`);
  }
  async setMaster(ref: string | number, master: number) {
    const l = this.#link(ref);
    this.#failIf(`master ${l.name} ${master}${l.up ? ' (while up)' : ''}`);
    l.master = master;
    this.emit({ kind: 'link', action: 'new', link: { ...l } });
  }
  async addAddress(ref: string | number, a: { address: string; validLifetime?: number }) {
    const l = this.#link(ref);
    this.#failIf(`addr ${l.name} ${a.address}${a.validLifetime !== undefined ? ` valid ${a.validLifetime}` : ''}`);
    const p = parseCidr(a.address);
    const addr: Address = { family: p.family, index: l.index, address: p.address, prefixLength: p.prefixLength, scope: 0, flags: 0, ...(a.validLifetime ? { validLifetime: a.validLifetime } : {}) };
    this.addresses = this.addresses.filter((x) => !(x.index === l.index && x.address === p.address));
    this.addresses.push(addr);
    this.emit({ kind: 'address', action: 'new', address: addr });
  }
  async deleteAddress(ref: string | number, address: string) {
    const l = this.#link(ref);
    this.#failIf(`deladdr ${l.name} ${address}`);
    const p = parseCidr(address);
    const a = this.addresses.find((x) => x.index === l.index && x.address === p.address);
    if (!a) throw Object.defineProperty(new NetlinkError('deladdr', 99), 'code', { value: 'EADDRNOTAVAIL' });
    this.addresses = this.addresses.filter((x) => x !== a);
    this.emit({ kind: 'address', action: 'del', address: a });
  }
  async addRoute(r: { dst: string; gateway?: string; link?: string | number; metric?: number; protocol?: number; prefsrc?: string }) {
    const oif = r.link === undefined ? undefined : this.#link(r.link).index;
    this.#failIf(`route ${r.dst} via ${r.gateway ?? '-'} metric ${r.metric ?? 0} proto ${r.protocol ?? RTPROT.STATIC}${r.prefsrc ? ` src ${r.prefsrc}` : ''}`);
    const route: Route = {
      family: 'inet4',
      dst: r.dst === 'default' ? '0.0.0.0/0' : r.dst,
      ...(r.gateway ? { gateway: r.gateway } : {}),
      ...(oif !== undefined ? { oif } : {}),
      priority: r.metric ?? 0,
      table: 254,
      protocol: r.protocol ?? RTPROT.STATIC,
      scope: 0,
      type: 1,
      flags: 0,
    };
    this.routes.push(route);
    this.emit({ kind: 'route', action: 'new', route });
  }
  async deleteRoute(r: { dst: string; gateway?: string }) {
    this.#failIf(`delroute ${r.dst} via ${r.gateway ?? '-'}`);
    const dst = r.dst === 'default' ? '0.0.0.0/0' : r.dst;
    const i = this.routes.findIndex((x) => x.dst === dst && x.gateway === r.gateway);
    if (i < 0) throw Object.defineProperty(new NetlinkError('delroute', 3), 'code', { value: 'ESRCH' });
    const [route] = this.routes.splice(i, 1);
    this.emit({ kind: 'route', action: 'del', route: route! });
  }
}

/** A DHCP server for one link: answers DISCOVER with OFFER and REQUEST with ACK when asked. */
class FakeDhcp implements DhcpTransport {
  sent: Array<{ type: number; to: string; xid: number; chaddr: string }> = [];
  #cb: ((d: Buffer) => void) | undefined;
  closed = false;
  start(cb: (d: Buffer) => void) {
    this.#cb = cb;
  }
  send(data: Buffer, to: string) {
    const p = decodePacket(data);
    this.sent.push({ type: p.options.get(Opt.MESSAGE_TYPE)![0]!, to, xid: p.xid, chaddr: p.chaddr });
  }
  close() {
    this.closed = true;
  }
  answer(type: number, extra: Array<[number, Buffer]> = []) {
    const last = this.sent.at(-1)!;
    this.#cb!(
      encodePacket({
        op: BOOTREPLY,
        xid: last.xid,
        chaddr: last.chaddr,
        yiaddr: '192.168.7.20',
        options: [
          opt.u8(Opt.MESSAGE_TYPE, type),
          opt.ip(Opt.SERVER_ID, '192.168.7.1'),
          opt.ip(Opt.SUBNET_MASK, '255.255.255.0'),
          opt.ips(Opt.ROUTER, ['192.168.7.1']),
          opt.ips(Opt.DNS, ['192.168.7.53']),
          opt.str(Opt.DOMAIN_NAME, 'lan.test'),
          opt.str(Opt.HOSTNAME, 'from-dhcp'),
          opt.ips(Opt.NTP, ['192.168.7.123']),
          opt.u16(Opt.MTU, 1450),
          opt.u32(Opt.LEASE_TIME, 600),
          ...extra,
        ],
      }),
    );
  }
  lease() {
    this.answer(MessageType.OFFER);
    this.answer(MessageType.ACK);
  }
}

const quiet: Logger & { lines: string[] } = {
  lines: [],
  info(m) {
    this.lines.push(`info ${m}`);
  },
  warn(m) {
    this.lines.push(`warn ${m}`);
  },
  error(m) {
    this.lines.push(`error ${m}`);
  },
};

describe('NetworkManager', () => {
  let kernel: FakeRtnl;
  let state: MemoryState;
  let dhcp: Map<string, FakeDhcp>;
  let dir: string;
  let manager: NetworkManager;
  const spec = async (type: string, id: string) => (await state.get('network', type, id)).spec as any;
  const ids = async (type: string) => (await state.list('network', type)).map((r) => r.metadata.id);

  beforeEach(() => {
    kernel = new FakeRtnl();
    kernel.links = [mkLink(1, 'lo', { type: 772, typeName: 'loopback', loopback: true }), mkLink(2, 'eth0'), mkLink(3, 'eth1'), mkLink(4, 'veth0', { kind: 'veth' })];
    state = new MemoryState();
    dhcp = new Map();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'networkd-'));
    quiet.lines.length = 0;
  });

  afterEach(async () => {
    await manager?.stop({ release: false });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function start(o: Partial<NetworkManagerOptions> = {}) {
    manager = new NetworkManager({
      publisher: new StatePublisher(state, 'networkd'),
      log: quiet,
      rtnl: kernel,
      subscribe: async (h) => {
        kernel.h = h;
        return { counters: { malformed: 0, stray: 0 }, close() {} };
      },
      resolvConfPath: path.join(dir, 'resolv.conf'),
      hostsPath: path.join(dir, 'hosts'),
      hostnamePath: path.join(dir, 'hostname'),
      defaultHostname: () => 'bronze-abc123',
      dhcpTransport: async (link) => {
        const t = new FakeDhcp();
        dhcp.set(link, t);
        return t;
      },
      dhcp: { jitterMs: 0 },
      retryMs: 50,
      debounceMs: 1,
      ...o,
    });
    await manager.start();
    await manager.settled();
  }

  it('by default brings loopback up and runs DHCP on physical links only, minus the ignored', async () => {
    await start({ cmdline: 'bronze.network.interface.ignore=eth1' });
    expect(kernel.links.find((l) => l.name === 'lo')!.up).toBe(true);
    expect([...dhcp.keys()]).toEqual(['eth0']);
    expect(dhcp.get('eth0')!.sent[0]).toMatchObject({ type: MessageType.DISCOVER, to: 'broadcast' });
    expect(kernel.links.find((l) => l.name === 'veth0')!.up).toBe(false);
    expect(manager.status().ignored).toEqual(['eth1']);
    expect((await ids('LinkStatuses.net.talos.dev')).sort()).toEqual(['eth0', 'eth1', 'lo', 'veth0']);
  });

  it('applies a lease: address with its lifetime, default route, MTU, resolvers, hostname, time servers, files', async () => {
    const names: string[] = [];
    await start({ cmdline: 'bronze.network.interface.ignore=eth1', setHostname: (n) => names.push(n) });
    dhcp.get('eth0')!.lease();
    await manager.settled();
    expect(kernel.calls).toContain('addr eth0 192.168.7.20/24 valid 600');
    expect(kernel.calls).toContain('route 0.0.0.0/0 via 192.168.7.1 metric 1024 proto 16 src 192.168.7.20');
    expect(kernel.links.find((l) => l.name === 'eth0')!.mtu).toBe(1450);
    expect(await spec('ResolverStatuses.net.talos.dev', 'resolvers')).toEqual({ dnsServers: ['192.168.7.53'], searchDomains: ['lan.test'] });
    expect(await spec('HostnameStatuses.net.talos.dev', 'hostname')).toEqual({ hostname: 'from-dhcp', domainname: 'lan.test' });
    expect(await spec('TimeServerStatuses.net.talos.dev', 'timeservers')).toEqual({ timeServers: ['192.168.7.123'] });
    expect(await spec('NodeAddresses.net.talos.dev', 'default')).toEqual({ addresses: ['192.168.7.20/24'] });
    expect(await spec('AddressStatuses.net.talos.dev', 'eth0/192.168.7.20/24')).toMatchObject({ linkName: 'eth0', family: 'inet4', scope: 'global' });
    expect(await spec('RouteStatuses.net.talos.dev', 'inet4/192.168.7.1//1024')).toMatchObject({ protocol: 'dhcp', outLinkName: 'eth0' });
    expect(names).toEqual(['bronze-abc123', 'from-dhcp']);
    expect(fs.readFileSync(path.join(dir, 'resolv.conf'), 'utf8')).toContain('nameserver 192.168.7.53\nsearch lan.test\n');
    expect(fs.readFileSync(path.join(dir, 'hosts'), 'utf8')).toContain('192.168.7.20\tfrom-dhcp.lan.test from-dhcp\n');
    expect(fs.readFileSync(path.join(dir, 'hostname'), 'utf8')).toBe('from-dhcp\n');
    expect(manager.status().interfaces.find((i) => i.name === 'eth0')!.dhcp).toMatchObject({ state: 'bound', address: '192.168.7.20/24' });
  });

  it('DHCPv4Config: a lease on a link that ignores DHCP routes gets its address only; routeMetric sets the metric', async () => {
    await start({ config: { ignore: ['eth1'], interfaces: [{ interface: 'eth0', dhcp: true, dhcpOptions: { ignoreRoutes: true } }] } });
    dhcp.get('eth0')!.lease();
    await manager.settled();
    expect(kernel.calls).toContain('addr eth0 192.168.7.20/24 valid 600');
    expect(kernel.calls.filter((c) => c.startsWith('route '))).toEqual([]);
    await manager.stop({ release: false });
    kernel.calls.length = 0;
    await start({ config: { ignore: ['eth1'], interfaces: [{ interface: 'eth0', dhcp: true, dhcpOptions: { routeMetric: 2048 } }] } });
    dhcp.get('eth0')!.lease();
    await manager.settled();
    expect(kernel.calls).toContain('route 0.0.0.0/0 via 192.168.7.1 metric 2048 proto 16 src 192.168.7.20');
  });

  it('creates a bond, enslaves its members (down first), and configures the bond', async () => {
    await start({
      config: {
        interfaces: [
          { interface: 'bond0', virtual: { kind: 'bond', options: { bondMode: 'active-backup', miimon: 100 } }, addresses: ['10.7.0.2/24'] },
          { interface: 'eth0', master: 'bond0' },
          { interface: 'eth1', master: 'bond0' },
        ],
      },
    });
    await manager.settled();
    const bond = kernel.links.find((l) => l.name === 'bond0')!;
    expect(kernel.calls).toContain('create bond bond0 (2 options)');
    expect(kernel.calls).toContain('change bond bond0 (2 options)');
    expect(kernel.calls).toContain(`master eth0 ${bond.index}`);
    expect(kernel.calls).toContain(`master eth1 ${bond.index}`);
    expect(kernel.calls.some((c) => c.includes('(while up)'))).toBe(false);
    expect(kernel.links.filter((l) => l.master === bond.index).map((l) => [l.name, l.up])).toEqual([['eth0', true], ['eth1', true]]);
    expect(kernel.calls).toContain('addr bond0 10.7.0.2/24');
    // Members get no DHCP of their own.
    expect(dhcp.size).toBe(0);
  });

  it('sets the options of a bond that exists already (the bonding driver makes bond0 itself), down, and refuses a link of another kind', async () => {
    kernel.links.push(mkLink(50, 'bond0', { kind: 'bond', up: true }));
    await start({ config: { interfaces: [{ interface: 'bond0', virtual: { kind: 'bond', options: { bondMode: '802.3ad' } } }, { interface: 'eth0', master: 'bond0' }, { interface: 'eth1', ignore: true }] } });
    expect(kernel.calls.filter((c) => c.startsWith('create'))).toEqual([]);
    expect(kernel.calls).toContain('change bond bond0 (1 options)');
    expect(kernel.calls.lastIndexOf('up bond0')).toBeGreaterThan(kernel.calls.indexOf('change bond bond0 (1 options)'));
    expect(kernel.links.find((l) => l.name === 'bond0')!.up).toBe(true);
    const n = kernel.calls.length;
    manager.setConfig({ interfaces: [{ interface: 'bond0', virtual: { kind: 'bond', options: { bondMode: '802.3ad' } } }, { interface: 'eth0', master: 'bond0' }, { interface: 'eth1', ignore: true }] });
    await manager.settled();
    expect(kernel.calls.slice(n).filter((c) => c.startsWith('change'))).toEqual([]);
    manager.setConfig({ interfaces: [{ interface: 'eth1', virtual: { kind: 'bridge', options: {} } }] });
    await manager.settled();
    expect(manager.status().interfaces.find((i) => i.name === 'eth1')!.state).toBe('error');
  });

  it('re-adds a lease\'s routes when the configuration changes their metric or ignores them', async () => {
    await start({ config: { ignore: ['eth1'] } });
    dhcp.get('eth0')!.lease();
    await manager.settled();
    expect(kernel.calls).toContain('route 0.0.0.0/0 via 192.168.7.1 metric 1024 proto 16 src 192.168.7.20');
    let n = kernel.calls.length;
    manager.setConfig({ ignore: ['eth1'], interfaces: [{ interface: 'eth0', dhcp: true, dhcpOptions: { routeMetric: 1500 } }] });
    await manager.settled();
    expect(kernel.calls.slice(n)).toEqual(expect.arrayContaining(['delroute 0.0.0.0/0 via 192.168.7.1', 'route 0.0.0.0/0 via 192.168.7.1 metric 1500 proto 16 src 192.168.7.20']));
    expect(dhcp.get('eth0')!.sent.filter((m) => m.type === MessageType.RELEASE)).toEqual([]);
    n = kernel.calls.length;
    manager.setConfig({ ignore: ['eth1'], interfaces: [{ interface: 'eth0', dhcp: true, dhcpOptions: { routeMetric: 1500, ignoreRoutes: true } }] });
    await manager.settled();
    expect(kernel.calls.slice(n).filter((c) => c.includes('route'))).toEqual(['delroute 0.0.0.0/0 via 192.168.7.1']);
    expect(kernel.routes.filter((r) => r.gateway === '192.168.7.1')).toEqual([]);
  });

  it('prefers the configuration over DHCP, and DHCP over the defaults', async () => {
    await start({ config: { hostname: 'cfg-node.example.org', nameservers: ['10.0.0.53'], searchDomains: ['example.org'], ignore: ['eth1'] } });
    expect(await spec('ResolverStatuses.net.talos.dev', 'resolvers')).toEqual({ dnsServers: ['10.0.0.53'], searchDomains: ['example.org'] });
    dhcp.get('eth0')!.lease();
    await manager.settled();
    expect(await spec('HostnameStatuses.net.talos.dev', 'hostname')).toEqual({ hostname: 'cfg-node', domainname: 'example.org' });
    expect(await spec('ResolverStatuses.net.talos.dev', 'resolvers')).toEqual({ dnsServers: ['10.0.0.53'], searchDomains: ['example.org'] });
    expect(await spec('TimeServerStatuses.net.talos.dev', 'timeservers')).toEqual({ timeServers: ['192.168.7.123'] });
  });

  it('uses defaults without configuration or DHCP', async () => {
    await start({ cmdline: 'ip=off' });
    expect(dhcp.size).toBe(0);
    expect(await spec('ResolverStatuses.net.talos.dev', 'resolvers')).toEqual({ dnsServers: ['1.1.1.1', '8.8.8.8'], searchDomains: [] });
    expect(await spec('HostnameStatuses.net.talos.dev', 'hostname')).toEqual({ hostname: 'bronze-abc123', domainname: '' });
    expect(await spec('TimeServerStatuses.net.talos.dev', 'timeservers')).toEqual({ timeServers: ['time.cloudflare.com'] });
  });

  it('removes the address and route when the lease is released or ends', async () => {
    await start({ config: { ignore: ['eth1'] } });
    dhcp.get('eth0')!.lease();
    await manager.settled();
    await manager.stop({ release: true });
    expect(dhcp.get('eth0')!.sent.at(-1)).toMatchObject({ type: MessageType.RELEASE, to: '192.168.7.1' });
    expect(kernel.calls).toContain('delroute 0.0.0.0/0 via 192.168.7.1');
    expect(kernel.calls).toContain('deladdr eth0 192.168.7.20/24');
    expect(kernel.addresses.some((a) => a.address === '192.168.7.20')).toBe(false);
  });

  it('applies static addresses, routes, MTU and kernel ip=, and removes what the config drops', async () => {
    await start({
      cmdline: 'ip=10.5.0.2::10.5.0.1:255.255.255.0::eth1:off:10.5.0.53',
      config: { interfaces: [{ interface: 'eth0', addresses: ['10.0.0.2/24', '10.0.1.2/24'], mtu: 9000, routes: [{ network: '10.9.0.0/16', gateway: '10.0.0.254', metric: 50 }] }] },
    });
    expect(dhcp.size).toBe(0);
    expect(kernel.calls).toEqual(expect.arrayContaining(['mtu eth0 9000', 'up eth0', 'addr eth0 10.0.0.2/24', 'addr eth0 10.0.1.2/24', 'route 10.9.0.0/16 via 10.0.0.254 metric 50 proto 4']));
    expect(kernel.calls).toEqual(expect.arrayContaining(['addr eth1 10.5.0.2/24', 'route default via 10.5.0.1 metric 1024 proto 4']));
    expect(await spec('ResolverStatuses.net.talos.dev', 'resolvers')).toMatchObject({ dnsServers: ['10.5.0.53'] });
    const n = kernel.calls.length;
    // Idempotent: another pass changes nothing.
    manager.setConfig({ interfaces: [{ interface: 'eth0', addresses: ['10.0.0.2/24', '10.0.1.2/24'], mtu: 9000, routes: [{ network: '10.9.0.0/16', gateway: '10.0.0.254', metric: 50 }] }] });
    await manager.settled();
    expect(kernel.calls.slice(n)).toEqual([]);
    manager.setConfig({ interfaces: [{ interface: 'eth0', addresses: ['10.0.0.2/24'], mtu: 9000 }] });
    await manager.settled();
    expect(kernel.calls.slice(n)).toEqual(['deladdr eth0 10.0.1.2/24']);
  });

  it('reports a failing link for that interface, keeps configuring the others, and retries', async () => {
    kernel.fail.set('mtu eth0', 'EPERM');
    await start({ config: { interfaces: [{ interface: 'eth0', mtu: 9000, addresses: ['10.0.0.2/24'] }, { interface: 'eth1', addresses: ['10.1.0.2/24'] }, { interface: 'eth7', dhcp: true }] } });
    const st = Object.fromEntries(manager.status().interfaces.map((i) => [i.name, i]));
    expect(st.eth0!.state).toBe('error');
    expect(st.eth0!.errors[0]!.message).toBe('set MTU 9000: mtu eth0 9000: EPERM');
    expect(st.eth1!.state).toBe('configured');
    expect(st.eth7!.state).toBe('waiting');
    expect(kernel.calls).toContain('addr eth0 10.0.0.2/24'); // the rest of eth0 still applied
    expect(quiet.lines).toContain('warn eth0: set MTU 9000: mtu eth0 9000: EPERM');
    kernel.fail.clear();
    await new Promise((r) => setTimeout(r, 120));
    await manager.settled();
    expect(manager.status().interfaces.find((i) => i.name === 'eth0')!.state).toBe('configured');
    expect(kernel.links.find((l) => l.name === 'eth0')!.mtu).toBe(9000);
    // A link that appears later is configured then.
    kernel.addLink(mkLink(7, 'eth7'));
    await new Promise((r) => setTimeout(r, 20));
    await manager.settled();
    expect(dhcp.has('eth7')).toBe(true);
  });

  it('creates configured VLANs, and reports the kernel refusing one', async () => {
    await start({ config: { interfaces: [{ interface: 'eth0', vlans: [{ vlanId: 10, addresses: ['10.10.0.2/24'] }] }, { interface: 'eth1', vlans: [{ vlanId: 20 }] }] } });
    expect(kernel.calls).toEqual(expect.arrayContaining(['vlan eth0.10', 'addr eth0.10 10.10.0.2/24']));
    expect(await spec('LinkStatuses.net.talos.dev', 'eth0.10')).toMatchObject({ kind: 'vlan', vlan: { vlanID: 10 } });
    await manager.stop();
    kernel = new FakeRtnl();
    kernel.links = [mkLink(2, 'eth0')];
    kernel.fail.set('vlan', 'ENOTSUP');
    await start({ config: { interfaces: [{ interface: 'eth0', vlans: [{ vlanId: 10 }] }] } });
    const st = manager.status().interfaces.find((i) => i.name === 'eth0.10')!;
    expect(st.state).toBe('error');
    expect(st.errors[0]!.message).toMatch(/ENOTSUP/);
    expect(manager.status().interfaces.find((i) => i.name === 'eth0')!.state).toBe('configured');
  });

  it('publishes what it observes and forgets links that go', async () => {
    await start({ cmdline: 'ip=off' });
    kernel.emit({ kind: 'address', action: 'new', address: { family: 'inet6', index: 3, address: '2001:db8::3', prefixLength: 64, scope: 0, flags: 0x80 } });
    await manager.settled();
    expect(await spec('AddressStatuses.net.talos.dev', 'eth1/2001:db8::3/64')).toMatchObject({ family: 'inet6', flags: 'permanent' });
    kernel.emit({ kind: 'link', action: 'del', link: kernel.links.find((l) => l.name === 'eth1')! });
    kernel.links = kernel.links.filter((l) => l.name !== 'eth1');
    await new Promise((r) => setTimeout(r, 10));
    await manager.settled();
    expect(await ids('LinkStatuses.net.talos.dev')).not.toContain('eth1');
    expect(await ids('AddressStatuses.net.talos.dev')).not.toContain('eth1/2001:db8::3/64');
  });

  it('survives a publisher that fails, and observes only when manage is false', async () => {
    const failing = {
      apply: async () => {
        throw new Error('machined unavailable');
      },
      destroy: async () => {},
      list: async () => [],
      watch: () => (async function* () {})(),
    };
    await start({ publisher: failing, manage: false });
    expect(quiet.lines.some((l) => l.startsWith('warn publish LinkStatuses.net.talos.dev'))).toBe(true);
    expect(kernel.calls).toEqual([]);
    expect(dhcp.size).toBe(0);
    expect(fs.existsSync(path.join(dir, 'resolv.conf'))).toBe(false);
  });
});
