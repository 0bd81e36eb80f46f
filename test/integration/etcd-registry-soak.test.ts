// A soak of the member registry (ClusterRegistry.hello, what every control plane does every
// 10 s) against two real etcds started with Bronze's command line: one with Bronze's periodic
// auto-compaction (a 1 s retention for a 5 min one: time runs ~50x faster here, each simulated
// node refreshing every few tens of ms instead of every 10 s), one with compaction turned off
// (cluster.etcd.extraArgs auto-compaction-retention: "0", etcd's own default). The same load,
// hours of simulated refreshes, goes to both: the compacted etcd's DB size in use stays flat
// after a warm-up, the other's keeps growing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostEtcd, haveEtcd } from '../lib/etcd-host.ts';
import { ClusterRegistry } from '../../src/machined/cluster/registry.ts';
import { MemoryState } from '../../src/state/memory.ts';
import type { MemberSpec } from '../../src/contract/resources/member.ts';
import type { EtcdClient } from '../../src/etcd/client.ts';

const NODES = 5;
const LOAD_MS = 30_000;
const SAMPLE_MS = 1000;
/** Bronze's refresh interval: what one hello stands for. */
const REAL_INTERVAL_S = 10;

/**
 * Whether DB sizes sampled under a steady load stay flat after a warm-up (the first 40%):
 * smoothed (the median of each three samples: compaction runs every second and the pages it
 * frees are reused a moment later, a sawtooth), never above 1.5x the warm-up's peak, plus
 * 128 KiB for bbolt's page-level noise.
 */
function flat(samples: number[]): boolean {
  const smooth = samples.map((_, i) => [...samples.slice(Math.max(0, i - 1), i + 2)].sort((a, b) => a - b)[1] ?? samples[i]!);
  const warm = Math.ceil(smooth.length * 0.4);
  return Math.max(...smooth.slice(warm)) <= Math.max(...smooth.slice(0, warm)) * 1.5 + 128 * 1024;
}

const pinned = (a: string) => ({ advertised: [a], listenPeer: [a], listenClient: [a] });

describe.skipIf(!haveEtcd)('member registry soak: etcd DB size stays bounded with compaction (real etcd, real mTLS)', () => {
  const compacted = new HostEtcd('soak-compacted', pinned('127.0.0.73'), '127.0.0.73', { 'auto-compaction-retention': '1s' });
  const uncompacted = new HostEtcd('soak-uncompacted', pinned('127.0.0.74'), '127.0.0.74', { 'auto-compaction-retention': '0' });
  const clients: EtcdClient[] = [];

  beforeAll(async () => {
    await Promise.all([compacted.start(), uncompacted.start()]);
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    await Promise.all([compacted.stop(), uncompacted.stop()]);
  });

  it('hours of refreshes from several nodes: flat in use with compaction, growing without', async () => {
    expect(compacted.args).toContain('--auto-compaction-mode=periodic');
    expect(uncompacted.args).toContain('--auto-compaction-retention=0');
    const registry = new ClusterRegistry({ log: { info() {}, warn() {}, error() {} }, state: new MemoryState(), self: () => undefined, etcd: async () => undefined });
    // Records as large as the registry takes (16 addresses: a node with many links).
    const members: MemberSpec[] = Array.from({ length: NODES }, (_, i) => ({
      nodeId: `soak-node-${i}`,
      hostname: `cp${i + 1}.cluster.example.internal`,
      addresses: Array.from({ length: 16 }, (_, k) => (k < 8 ? `10.${k}.0.${i + 2}` : `fd00:${k}:5:0:5054:ff:fe12:${(i + 2).toString(16)}`)),
      machineType: 'controlplane',
      operatingSystem: 'Bronze (v0.1.0)',
    }));
    const targets = [compacted, uncompacted].map((etcd) => {
      const client = etcd.client();
      clients.push(client);
      return { etcd, client, hellos: 0, inUse: [] as number[] };
    });

    const stopAt = Date.now() + LOAD_MS;
    // Each simulated node refreshes its record in both etcds, back to back, as fast as they take it.
    const load = members.map(async (m) => {
      while (Date.now() < stopAt) {
        await Promise.all(
          targets.map(async (t) => {
            const seen = await registry.hello(t.client, m, 5000);
            expect(seen.map((s) => s.nodeId)).toContain(m.nodeId);
            t.hellos++;
          }),
        );
      }
    });
    const sampler = (async () => {
      while (Date.now() < stopAt) {
        await new Promise((r) => setTimeout(r, SAMPLE_MS));
        for (const t of targets) t.inUse.push((await t.client.status()).dbSizeInUse);
      }
    })();
    await Promise.all([...load, sampler]);

    const [c, u] = targets as [(typeof targets)[0], (typeof targets)[0]];
    const hours = (c.hellos / NODES) * REAL_INTERVAL_S / 3600;
    const kib = (n: number) => Math.round(n / 1024);
    console.log(
      `registry soak: ${NODES} nodes, ${c.hellos} refreshes each etcd (${hours.toFixed(1)} simulated hours at one per ${REAL_INTERVAL_S} s)\n` +
        `  in use with compaction (KiB):    ${c.inUse.map(kib).join(' ')}\n` +
        `  in use without compaction (KiB): ${u.inUse.map(kib).join(' ')}`,
    );

    // Enough load to mean something: at least an hour of a 5-node cluster's refreshes.
    expect(hours).toBeGreaterThanOrEqual(1);
    expect(u.hellos).toBe(c.hellos);
    // The same test must hold for the etcd with compaction and fail for the one without.
    expect(flat(c.inUse), 'in use with compaction is flat after the warm-up').toBe(true);
    expect(flat(u.inUse), 'in use without compaction grows').toBe(false);
    expect(u.inUse.at(-1)!).toBeGreaterThan(c.inUse.at(-1)! * 3);

    // The registry still answers with every node from the compacted etcd.
    const seen = await registry.hello(c.client, members[0]!, 5000);
    expect(seen.map((m) => m.nodeId).sort()).toEqual(members.map((m) => m.nodeId).sort());
  }, 60_000);
});
