import { describe, expect, it } from 'vitest';
import type { Link } from './netlink.ts';
import { planNetwork } from './plan.ts';

function link(index: number, name: string, extra: Partial<Link> = {}): Link {
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

const lo = link(1, 'lo', { type: 772, typeName: 'loopback', loopback: true, mac: '00:00:00:00:00:00' });
const eth0 = link(2, 'eth0');
const eth1 = link(3, 'eth1');
const veth = link(4, 'veth0', { kind: 'veth' });

const byName = (p: ReturnType<typeof planNetwork>) => Object.fromEntries(p.plans.map((x) => [x.name, x]));

describe('planNetwork', () => {
  it('by default: DHCP on every physical link, loopback up, virtual links left alone', () => {
    const p = byName(planNetwork([lo, eth0, eth1, veth], {}));
    expect(Object.keys(p).sort()).toEqual(['eth0', 'eth1', 'lo']);
    expect(p.eth0).toMatchObject({ dhcp: true, up: true, source: 'default-dhcp' });
    expect(p.lo).toMatchObject({ dhcp: false, up: true, source: 'loopback' });
  });

  it('static configuration replaces the default DHCP of that link only', () => {
    const p = byName(planNetwork([lo, eth0, eth1], { interfaces: [{ interface: 'eth0', addresses: ['10.0.0.2/24'], mtu: 9000 }] }));
    expect(p.eth0).toMatchObject({ dhcp: false, addresses: ['10.0.0.2/24'], mtu: 9000, source: 'config' });
    expect(p.eth1).toMatchObject({ dhcp: true });
  });

  it('honours ignore lists and ignore: true, and ip=off', () => {
    const p = planNetwork([lo, eth0, eth1], { ignore: ['eth1'], interfaces: [{ interface: 'eth0', ignore: true }] });
    expect(p.plans.map((x) => x.name)).toEqual(['lo']);
    expect(p.ignored).toEqual(['eth0', 'eth1']);
    expect(planNetwork([lo, eth0], {}, false).plans.map((x) => x.name)).toEqual(['lo']);
  });

  it('plans VLANs after their parent, with their own settings', () => {
    const p = byName(planNetwork([lo, eth0], { interfaces: [{ interface: 'eth0', dhcp: true, dhcpOptions: { routeMetric: 50 }, vlans: [{ vlanId: 100, dhcp: true, mtu: 1400 }] }] }));
    expect(p['eth0.100']).toMatchObject({ vlan: { parent: 'eth0', id: 100 }, dhcp: true, mtu: 1400, routeMetric: 50 });
    expect(p.eth0).toMatchObject({ routeMetric: 50 });
  });

  it('plans configured links that do not exist yet (the manager waits for them)', () => {
    const p = byName(planNetwork([lo], { interfaces: [{ interface: 'eth5', dhcp: true }] }));
    expect(p.eth5).toMatchObject({ dhcp: true });
  });

  it('resolves device selectors to the first matching link and reports the unsupported ones', () => {
    const p = planNetwork([lo, eth0, eth1], {
      interfaces: [{ deviceSelector: { hardwareAddr: '52:54:00:00:00:0*' }, addresses: ['10.0.0.2/24'] }, { deviceSelector: { driver: 'virtio_net' }, dhcp: true }, { deviceSelector: { hardwareAddr: 'aa:*' }, dhcp: true }],
    });
    const b = byName(p);
    expect(b.eth0).toMatchObject({ addresses: ['10.0.0.2/24'], dhcp: false });
    expect(b.eth1).toMatchObject({ dhcp: true, source: 'default-dhcp' });
    expect(p.problems).toEqual([
      { link: 'interfaces[1]', message: 'deviceSelector driver is not supported yet' },
      { link: 'interfaces[2]', message: 'deviceSelector matches no link (yet)' },
    ]);
  });
});
