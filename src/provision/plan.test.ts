import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CIDR, USER_NET_MAC, nodeConfig, planCluster } from './plan.ts';

describe('planCluster', () => {
  it("names and numbers nodes as talosctl does: gateway first, control planes, then workers", () => {
    const p = planCluster('demo', DEFAULT_CIDR, 3, 1);
    expect(p.gateway).toBe('10.5.0.1');
    expect(p.nodes.map((n) => [n.name, n.type, n.ip])).toEqual([
      ['demo-controlplane-1', 'controlplane', '10.5.0.2'],
      ['demo-controlplane-2', 'controlplane', '10.5.0.3'],
      ['demo-controlplane-3', 'controlplane', '10.5.0.4'],
      ['demo-worker-1', 'worker', '10.5.0.5'],
    ]);
  });

  it('gives each node its own MAC and a tap name that fits IFNAMSIZ, different per cluster', () => {
    const a = planCluster('a-rather-long-cluster-name-here', '10.9.0.0/24', 2, 2);
    const b = planCluster('other', '10.9.0.0/24', 2, 2);
    expect(new Set(a.nodes.map((n) => n.mac)).size).toBe(4);
    for (const n of a.nodes) {
      expect(n.tap.length).toBeLessThanOrEqual(15);
      expect(n.mac).toMatch(/^52:54(:[0-9a-f]{2}){4}$/);
    }
    expect(a.nodes[0]!.tap).not.toBe(b.nodes[0]!.tap);
    expect(a.nodes.map((n) => n.mac)).not.toContain(USER_NET_MAC);
  });

  it('takes the network of a CIDR written with host bits', () => {
    expect(planCluster('x', '192.168.7.99/24', 1, 0).nodes[0]!.ip).toBe('192.168.7.2');
  });

  it('refuses what cannot be a cluster, naming the flag', () => {
    expect(() => planCluster('x', '10.5.0.0/30', 1, 1)).toThrow(/--cidr 10.5.0.0\/30: room for 1 nodes, 2 asked for/);
    expect(() => planCluster('x', 'fd00::/64', 1, 0)).toThrow(/--cidr fd00::\/64: an IPv4 network is expected/);
    expect(() => planCluster('x', '10.5.0/24', 1, 0)).toThrow(/--cidr "10.5.0\/24"/);
    expect(() => planCluster('x', DEFAULT_CIDR, 0, 1)).toThrow(/--controlplanes 0/);
    expect(() => planCluster('x', DEFAULT_CIDR, 1, -1)).toThrow(/--workers -1/);
  });
});

describe('nodeConfig', () => {
  const generated = 'version: v1alpha1\nmachine:\n  type: controlplane\n  network: {}\ncluster:\n  etcd: {}\n---\napiVersion: v1alpha1\nkind: HostnameConfig\nauto: stable\n';
  it("sets the hostname, the bridge link by MAC with its address, DHCP on the API's link, and etcd's subnet", () => {
    const p = planCluster('demo', DEFAULT_CIDR, 1, 1);
    const docs = YAML.parseAllDocuments(nodeConfig(generated, p.nodes[0]!, p)).map((d) => d.toJS());
    expect(docs[0].machine.network).toEqual({
      hostname: 'demo-controlplane-1',
      interfaces: [
        { deviceSelector: { hardwareAddr: p.nodes[0]!.mac }, dhcp: false, addresses: ['10.5.0.2/24'] },
        { deviceSelector: { hardwareAddr: USER_NET_MAC }, dhcp: true },
      ],
    });
    expect(docs[0].cluster.etcd.advertisedSubnets).toEqual(['10.5.0.0/24']);
    expect(docs[1]).toEqual({ apiVersion: 'v1alpha1', kind: 'HostnameConfig', auto: 'stable' });
    const worker = YAML.parse(nodeConfig(generated.split('---')[0]!, p.nodes[1]!, p));
    expect(worker.cluster.etcd.advertisedSubnets).toBeUndefined();
  });
});
