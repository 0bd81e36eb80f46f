// apid, trustd and timed under their own users (BRONZE_DAEMON_USERS=1, as on a node where
// machined is PID 1): a real machined in host mode supervising the real daemons, real mTLS.
// Each runs with its uid and only its capabilities (/proc/<pid>/status), and everything they
// need stays reachable: apid serves the API (its certificates, machined's socket with the
// caller's roles, timed's socket), trustd signs (the CA and apid's certificate), timed
// publishes to machined. Needs root, as on a node.
import fs from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { serviceClient } from '../../src/contract/protos.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { capabilityMask, parseProcStatus } from '../../src/lib/capabilities.ts';
import { DAEMON_USERS } from '../../src/lib/daemon-users.ts';
import { issueClientCert } from '../../src/pki/certs.ts';
import { HostNode } from '../lib/nodes.ts';
import { freePort } from '../lib/ports.ts';

const isRoot = process.getuid?.() === 0;

type Unary = (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: any) => void) => void;

/** The children of `ppid` by their argv[0] (the daemon's role). */
function childrenOf(ppid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent !== ppid) continue;
      const argv0 = fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0')[0]!;
      out.set(argv0, Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe.skipIf(!isRoot)('daemons under their own users', () => {
  let node: HostNode;
  let admin: grpc.ChannelCredentials;
  let pids: Map<string, number>;

  beforeAll(async () => {
    const port = await freePort();
    const trustdPort = await freePort();
    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'users', endpoint: 'https://127.0.0.30:6443', secrets });
    node = new HostNode({
      name: 'users',
      address: '127.0.0.30',
      apiPort: port,
      trustdPort,
      config: cfg.controlplane,
      services: ['apid', 'trustd', 'timed'],
      env: { BRONZE_DAEMON_USERS: '1', BRONZE_TIME_CONFIG: '{"servers":["127.0.0.1"]}' },
    });
    fs.chmodSync(node.dir, 0o711); // the daemons' users reach their directories below it
    node.start();
    await node.waitFor(/serving the API on/, 60_000);
    await node.waitFor(/signing certificates on/, 30_000);
    await node.waitFor(/timed: .*serving on/, 30_000);
    pids = childrenOf(node.proc!.pid!);
    const a = await issueClientCert(secrets.certs.os, { commonName: 'admin', roles: ['os:admin'], ttlMs: 3600_000 });
    admin = grpc.credentials.createSsl(Buffer.from(secrets.certs.os.crt), Buffer.from(a.key), Buffer.from(a.crt));
  }, 120_000);

  afterAll(async () => {
    await node?.stop();
  });

  it('each runs as its own uid and gid with only its capabilities', () => {
    const want: Record<string, bigint> = { apid: 0n, trustd: 0n, timed: capabilityMask(['CAP_SYS_TIME']) };
    for (const id of ['apid', 'trustd', 'timed'] as const) {
      const pid = pids.get(id);
      expect(pid, `${id} among ${[...pids.keys()].join(', ')}`).toBeDefined();
      const s = parseProcStatus(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
      const u = DAEMON_USERS[id];
      expect(s.uid, id).toEqual([u.uid, u.uid, u.uid, u.uid]);
      expect(s.gid, id).toEqual([u.gid, u.gid, u.gid, u.gid]);
      expect(s.groups, id).toEqual([]);
      expect([s.capEff, s.capPrm, s.capAmb], id).toEqual([want[id], want[id], want[id]]);
    }
  });

  it('apid serves the API through machined\'s socket (with the caller\'s roles)', async () => {
    const c = new (serviceClient('machine.MachineService'))(node.endpoint, admin) as unknown as grpc.Client & { Version: Unary; Hostname: Unary };
    const r = await new Promise<any>((resolve, reject) => c.Version({}, new grpc.Metadata(), { deadline: Date.now() + 20_000 }, (e, res) => (e ? reject(e) : resolve(res))));
    expect(r.messages[0].version.tag).toMatch(/^v\d/);
    c.close();
  });

  it('apid reaches timed\'s socket: the answer is timed\'s own', async () => {
    const c = new (serviceClient('time.TimeService'))(node.endpoint, admin) as unknown as grpc.Client & { TimeCheck: Unary };
    const err = await new Promise<grpc.ServiceError | null>((resolve) => c.TimeCheck({ server: 'no such server!' }, new grpc.Metadata(), { deadline: Date.now() + 20_000 }, (e) => resolve(e)));
    c.close();
    // timed judged the server name; apid did not fail to connect.
    expect(err?.code, err?.details).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it('machined refused nobody, and no daemon was denied a file', () => {
    const out = node.output.join('\n');
    expect(out).not.toMatch(/refused a connection/);
    expect(out).not.toMatch(/EACCES|EPERM|permission denied|PERMISSION_DENIED|UNAUTHENTICATED|must name the caller's roles|may write only as/i);
    if (process.env.BRONZE_TEST_SHOW_OUTPUT) console.log(out);
  });
});
