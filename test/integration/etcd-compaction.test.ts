// etcd as Bronze runs it, for real (Debian's etcd, Bronze's command line, mutual TLS):
// - it listens where cluster.etcd.listenSubnets / advertisedSubnets say, and nowhere else;
// - its periodic auto-compaction (Bronze's default mode, a 2 s retention here instead of 5 min)
//   drops the history of rewritten keys, so the DB size in use falls;
// - EtcdDefragment (the machine API's handler over the real etcd service) then gives the space
//   back: the DB size falls to about the size in use; EtcdStatus reports both.
import net from 'node:net';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostEtcd, haveEtcd } from '../lib/etcd-host.ts';
import { etcdAddresses } from '../../src/machined/etcd/addresses.ts';
import { EtcdService } from '../../src/machined/etcd/service.ts';
import { etcdHandlers } from '../../src/machined/api/etcd.ts';
import { callUnary } from '../../src/machined/api/testing.ts';
import { silentLogger } from '../../src/lib/log.ts';
import type { EtcdClient } from '../../src/etcd/client.ts';

/** Whether something accepts TCP connections at host:port. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    s.setTimeout(2000);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
  });
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.skipIf(!haveEtcd)('etcd compaction and defragment (real etcd, real mTLS)', () => {
  // The node has two addresses; cluster.etcd.advertisedSubnets picks one, so etcd advertises
  // and listens on it (and on 127.0.0.1 for machined), not on the other.
  const mine = '127.0.0.71';
  const other = '127.0.0.72';
  const plan = etcdAddresses([mine, other], { advertisedSubnets: [`${mine}/32`], listenSubnets: [] })!;
  const etcd = new HostEtcd('compaction', plan, mine, { 'auto-compaction-retention': '2s' });
  let service: EtcdService;
  let handlers: ReturnType<typeof etcdHandlers>;
  let client: EtcdClient;

  beforeAll(async () => {
    expect(plan).toEqual({ advertised: [mine], listenPeer: [mine], listenClient: ['127.0.0.1', mine] });
    await etcd.start();
    client = etcd.client();
    // The real etcd service of machined, over this etcd's certificates (its pki directory's
    // file names are the service's), and the machine API's etcd handlers on top of it.
    service = new EtcdService({
      log: silentLogger,
      isControlPlane: () => true,
      settings: () => undefined,
      controlPlaneHost: () => undefined,
      dataDir: path.join(etcd.dir, 'data'),
      pkiDir: path.join(etcd.dir, 'pki'),
    });
    handlers = etcdHandlers({ etcd: service, stopEtcd: async () => undefined, running: () => true });
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await etcd.stop();
  });

  it('runs with periodic auto-compaction, and listens only where the subnets say', async () => {
    expect(etcd.args).toContain('--auto-compaction-mode=periodic');
    expect(etcd.args).toContain('--auto-compaction-retention=2s');
    expect(etcd.args).toContain(`--listen-client-urls=https://127.0.0.1:2379,https://${mine}:2379`);
    expect(await accepts(mine, 2379)).toBe(true);
    expect(await accepts(mine, 2380)).toBe(true);
    expect(await accepts('127.0.0.1', 2379)).toBe(true);
    expect(await accepts(other, 2379)).toBe(false);
    expect(await accepts(other, 2380)).toBe(false);
    expect(await accepts('127.0.0.1', 2380)).toBe(false);
    const members = await client.memberList();
    expect(members.map((m) => [m.peerURLs, m.clientURLs])).toEqual([[[`https://${mine}:2380`], [`https://${mine}:2379`]]]);
  });

  it('compaction drops the history (size in use falls), then EtcdDefragment reclaims the space', async () => {
    // 8 keys rewritten 150 times each with 8 KiB: ~10 MB of history, 64 KiB of live data.
    const value = Buffer.alloc(8192, 'x');
    for (let round = 0; round < 150; round++) {
      await Promise.all(Array.from({ length: 8 }, (_, k) => client.put(`/it/key-${k}`, Buffer.concat([Buffer.from(`${round}:`), value]))));
    }
    // (Compaction may have started while the writes went on: the file holds some history still.)
    const written = await client.status();
    expect(written.dbSize).toBeGreaterThan(2_000_000);

    // Compacted (etcd's own gauge: the revision the store is compacted to) up to the last
    // write (revision 1 + 1200 puts), and most of the file is now free pages.
    expect(await etcd.metric('etcd_debugging_mvcc_compact_revision')).toBeDefined();
    await until('compaction up to the last write', async () => ((await etcd.metric('etcd_debugging_mvcc_compact_revision'))! >= 1201 ? true : undefined), 20_000);
    expect(etcd.output.some((l) => /compactor: Finished auto-compaction/.test(l))).toBe(true);
    // bbolt reuses (and counts as free) the pages compaction freed once a later write commits:
    // a cluster keeps writing (the registry refreshes every 10 s), so write a little here too.
    const compacted = await until(
      'the size in use to fall',
      async () => {
        await client.put('/it/tick', String(Date.now()));
        const s = await client.status();
        return s.dbSizeInUse < s.dbSize / 4 ? s : undefined;
      },
      20_000,
    );
    // The file itself keeps its size until defragmented.
    expect(compacted.dbSize).toBeGreaterThanOrEqual(written.dbSize);

    // EtcdStatus says both sizes (Talos's EtcdMemberStatus.db_size and db_size_in_use).
    const st = await callUnary(handlers.EtcdStatus as grpc.handleUnaryCall<any, any>, {});
    const ms = st.messages[0].member_status;
    expect(Number(ms.db_size)).toBeGreaterThan(2_000_000);
    expect(Number(ms.db_size_in_use)).toBeGreaterThan(0);
    expect(Number(ms.db_size_in_use)).toBeLessThan(Number(ms.db_size) / 4);

    await callUnary(handlers.EtcdDefragment as grpc.handleUnaryCall<any, any>, {});
    const after = await client.status();
    expect(after.dbSize).toBeLessThan(written.dbSize / 4);
    expect(after.dbSize).toBeLessThan(compacted.dbSizeInUse * 2 + 1_000_000);
    // The live data is all there.
    const kvs = await client.get('/it/key-');
    expect(kvs).toHaveLength(8);
    expect(kvs.every((kv) => kv.value.toString().startsWith('149:'))).toBe(true);
  }, 60_000);
});
