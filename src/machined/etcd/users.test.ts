// etcd under its own user (Talos's EtcdUserID 60) where daemon users are on: the real etcd
// binary, bootstrapped by the real service and supervisor, serving with its data directory and
// certificates made its own (written as root by machined). Needs root and Debian's etcd.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCA } from '../../pki/ca.ts';
import { silentLogger } from '../../lib/log.ts';
import { parseProcStatus } from '../../lib/capabilities.ts';
import { Supervisor } from '../supervisor/supervisor.ts';
import { EtcdService } from './service.ts';

const ETCD = '/usr/bin/etcd';
const usable = process.getuid?.() === 0 && fs.existsSync(ETCD);

describe.skipIf(!usable)('etcd under its own user', () => {
  let dir: string;
  let service: EtcdService;
  let sup: Supervisor;
  const before = process.env.BRONZE_DAEMON_USERS;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-etcd-users-'));
    fs.chmodSync(dir, 0o711);
    const ca = await newCA({ commonName: 'etcd', validityDays: 1 });
    process.env.BRONZE_DAEMON_USERS = '1';
    service = new EtcdService({
      log: silentLogger,
      isControlPlane: () => true,
      settings: () => ({ ca, extraArgs: {}, advertisedSubnets: [], listenSubnets: [] }),
      controlPlaneHost: () => undefined,
      dataDir: path.join(dir, 'var', 'lib', 'etcd'),
      pkiDir: path.join(dir, 'secrets', 'etcd'),
      etcdBin: ETCD,
      hostname: () => 'users',
      pinnedAddress: '127.0.0.61',
    });
    // Data left by a run as root: made etcd's at the start.
    // /var as on a node (EPHEMERAL's root, 0755), /var/lib 0700 as machined makes it.
    fs.mkdirSync(path.join(dir, 'var'), { mode: 0o755 });
    fs.mkdirSync(path.join(dir, 'var', 'lib'), { mode: 0o700 });
    sup = new Supervisor([{ ...service.spec({ PATH: process.env.PATH ?? '' }), dependsOn: [] }]);
    const started = sup.startService('etcd');
    for (let i = 0; i < 500 && !service.waiting; i++) await new Promise((r) => setTimeout(r, 10));
    await service.bootstrap({ recover: false, skipHashCheck: false });
    await started;
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await service.health();
        break;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`etcd never became healthy: ${(err as Error).message}\n${sup.logs('etcd').slice(-20).join('\n')}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }, 60_000);

  afterAll(async () => {
    await sup?.stop();
    service?.stop();
    if (before === undefined) delete process.env.BRONZE_DAEMON_USERS;
    else process.env.BRONZE_DAEMON_USERS = before;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs as uid and gid 60 with no capability, and serves', async () => {
    const s = parseProcStatus(fs.readFileSync(`/proc/${sup.get('etcd')!.pid}/status`, 'utf8'));
    expect(s.uid).toEqual([60, 60, 60, 60]);
    expect(s.gid).toEqual([60, 60, 60, 60]);
    expect([s.capEff, s.capPrm, s.capAmb]).toEqual([0n, 0n, 0n]);
    // machined (root) still talks to it with the certificates it wrote.
    const client = await service.cluster();
    try {
      expect((await client.memberList()).map((m) => m.name)).toEqual(['users']);
    } finally {
      client.close();
    }
  });

  it('owns its data and certificates; nothing else opened to others', () => {
    const st = (p: string) => fs.statSync(p);
    for (const p of [service.dataDir, path.join(service.dataDir, 'member'), path.join(dir, 'secrets', 'etcd', 'peer.key')]) expect([st(p).uid, st(p).gid], p).toEqual([60, 60]);
    expect(st(service.dataDir).mode & 0o777).toBe(0o700);
    expect(st(path.join(dir, 'secrets', 'etcd', 'peer.key')).mode & 0o777).toBe(0o600);
    expect(st(path.join(dir, 'var', 'lib')).mode & 0o777).toBe(0o701);
  });
});
