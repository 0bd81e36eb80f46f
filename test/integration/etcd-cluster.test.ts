// etcd on control planes, for real: two node processes (machined in host mode supervising apid
// and etcd, Debian's etcd binary) on 127.0.0.50 and .51, driven by the real bronzectl over mTLS.
// The first is bootstrapped; the second finds the cluster through the control-plane endpoint,
// joins as a learner and is promoted. Then: members from both nodes, the Member resources, a
// second bootstrap refused, a reboot refused for quorum, a snapshot, and a leave.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { HostNode } from '../lib/nodes.ts';
import { freePort } from '../lib/ports.ts';
import { bronzectl, type CliResult } from '../lib/bronzectl.ts';
import { EtcdClient } from '../../src/etcd/client.ts';
import { issuePeerCert } from '../../src/pki/certs.ts';

const ETCD = '/usr/bin/etcd';
const ETCDCTL = '/usr/bin/etcdctl';
const haveEtcd = fs.existsSync(ETCD) && fs.existsSync(ETCDCTL);

/** Runs `args` until `ok` holds of the result (or the time is up); the last result. */
async function until(args: string[], config: string, ok: (r: CliResult) => boolean, timeoutMs: number): Promise<CliResult> {
  const deadline = Date.now() + timeoutMs;
  let last: CliResult;
  do {
    last = await bronzectl(args, { config, timeoutMs: 30_000 });
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 1000));
  } while (Date.now() < deadline);
  return last;
}

/** The data rows of a table (header dropped), split on runs of 2+ spaces. */
const rows = (out: string) =>
  out
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(/\s{2,}/));

describe.skipIf(!haveEtcd)('etcd on control planes: bootstrap, join as a learner, promote (real etcd, real mTLS)', () => {
  const nodes: HostNode[] = [];
  let dir: string;
  let config: string;
  const addr = ['127.0.0.50', '127.0.0.51'];
  const workerAddr = '127.0.0.52';
  const recoverAddr = '127.0.0.53';
  let worker: HostNode;
  let secrets: Awaited<ReturnType<typeof generateSecrets>>;
  let port: number;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-etcd-it-'));
    port = await freePort();
    secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'etcd-it', endpoint: `https://${addr[0]}:6443`, secrets });
    expect(cfg.controlplane).toMatch(/etcd:\s*\n\s+ca:/);
    const trustdPort = await freePort();
    addr.forEach((a, i) => {
      const node = new HostNode({
        name: `cp${i + 1}`,
        address: a,
        apiPort: port,
        config: cfg.controlplane,
        // cp1 also runs trustd: the worker's way to its certificate and to the registry.
        services: i === 0 ? ['apid', 'trustd', 'etcd'] : ['apid', 'etcd'],
        ...(i === 0 ? { trustdPort } : {}),
        env: {
          BRONZE_HOSTNAME: `cp${i + 1}`,
          BRONZE_NODE_ID: `node-cp${i + 1}`,
          BRONZE_ETCD_ADDRESS: a,
          BRONZE_ETCD_BIN: ETCD,
          BRONZE_ETCD_RETRY_MS: '1000',
          BRONZE_REGISTRY_INTERVAL_MS: '1000',
        },
      });
      node.o.env!.BRONZE_ETCD_DIR = path.join(node.dir, 'etcd');
      nodes.push(node.start());
    });
    worker = new HostNode({
      name: 'w1',
      address: workerAddr,
      apiPort: port,
      config: cfg.worker,
      services: ['apid'],
      env: { BRONZE_HOSTNAME: 'w1', BRONZE_NODE_ID: 'node-w1', BRONZE_TRUSTD_PORT: String(trustdPort), BRONZE_REGISTRY_INTERVAL_MS: '1000' },
    });
    await nodes[0]!.waitFor(/signing certificates on/, 60_000);
    nodes.push(worker.start());
    await Promise.all(nodes.map((n) => n.waitFor(/serving the API on/, 60_000)));
    config = path.join(dir, 'bronzeconfig');
    await save(config, await newClientConfig({ contextName: 'etcd-it', endpoints: [nodes[0]!.endpoint], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
  }, 120_000);

  const snapshotFile = () => path.join(dir, 'snap.db');
  /** A client certificate from the cluster's etcd CA, as an operator with the secrets could make. */
  const etcdClientTls = async () => {
    const c = await issuePeerCert(secrets.certs.etcd!, { commonName: 'it', ipAddresses: ['127.0.0.1'], ttlMs: 3600_000 });
    return { ca: secrets.certs.etcd!.crt, cert: c.crt, key: c.key };
  };

  afterAll(async () => {
    if (process.env.BRONZE_TEST_KEEP_LOGS) for (const n of nodes) fs.writeFileSync(path.join(process.env.BRONZE_TEST_KEEP_LOGS, `${n.o.name}.log`), n.output.join('\n'));
    await Promise.all(nodes.map((n) => n.stop()));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('before bootstrap, etcd waits for it on both nodes, and says so', async () => {
    const r = await until(['-n', addr[0]!, 'service', 'etcd'], config, (r) => /Waiting for bootstrap/.test(r.stdout), 30_000);
    expect(r.stdout).toMatch(/STATE\s+Preparing/);
    expect(r.stdout).toMatch(/Waiting for bootstrap/);
    const members = await bronzectl(['-n', addr[0]!, 'etcd', 'members'], { config });
    expect(members.code).toBe(1);
    expect(members.stderr).toMatch(/member list: etcd is not running on this node \(it waits for bronzectl bootstrap, or to join the cluster\)/);
  });

  it('bootstrap starts the cluster on cp1; cp2 joins as a learner by itself and is promoted', async () => {
    const b = await bronzectl(['-n', addr[0]!, 'bootstrap'], { config });
    expect(b.stderr).toBe('');
    expect(b.code).toBe(0);
    const promoted = (r: CliResult) => r.code === 0 && rows(r.stdout).length === 2 && rows(r.stdout).every((row) => row[5] === 'false');
    const r = await until(['-n', addr[0]!, 'etcd', 'members'], config, promoted, 60_000);
    expect(r.stdout.split('\n')[0]).toMatch(/^NODE\s+ID\s+HOSTNAME\s+PEER URLS\s+CLIENT URLS\s+LEARNER$/);
    const table = rows(r.stdout);
    expect(table.map((row) => row[2]).sort()).toEqual(['cp1', 'cp2']);
    expect(table.map((row) => row[3]).sort()).toEqual([`https://${addr[0]}:2380`, `https://${addr[1]}:2380`]);
    expect(promoted(r)).toBe(true);
    // cp2 came in as a learner, then was promoted (its machined's log says both).
    await nodes[1]!.waitFor(/etcd: added this node as learner/, 5_000);
    await nodes[1]!.waitFor(/etcd: promoted learner/, 5_000);
    // Asked through cp2, the same two members.
    const via2 = await until(['-n', addr[1]!, 'etcd', 'members'], config, promoted, 30_000);
    expect(rows(via2.stdout).map((row) => row[2]).sort()).toEqual(['cp1', 'cp2']);
    // etcd is a healthy Running service on both.
    for (const a of addr) {
      const s = await until(['-n', a, 'service', 'etcd'], config, (x) => /HEALTH\s+OK/.test(x.stdout), 30_000);
      expect(s.stdout).toMatch(/STATE\s+Running/);
    }
  }, 120_000);

  it('a second bootstrap is refused, on the bootstrapped node and on the one that joined', async () => {
    const again = await bronzectl(['-n', addr[0]!, 'bootstrap'], { config });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/etcd data directory is not empty/);
    const other = await bronzectl(['-n', addr[1]!, 'bootstrap'], { config });
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/etcd data directory is not empty|bootstrapped already/);
  });

  it('every node is a Member resource, the worker too (the registry kept in etcd, served to workers by trustd)', async () => {
    const r = await until(['-n', addr[0]!, 'get', 'members'], config, (x) => x.code === 0 && /cp1/.test(x.stdout) && /cp2/.test(x.stdout), 20_000);
    expect(r.stdout.split('\n')[0]).toMatch(/NODE\s+NAMESPACE\s+TYPE\s+ID\s+VERSION\s+HOSTNAME\s+MACHINE TYPE\s+OS\s+ADDRESSES/);
    expect(r.stdout).toMatch(/cluster\s+Member\s+cp1\s+\d+\s+cp1\s+controlplane\s+Bronze \(v[^)]+\)\s+\["127\.0\.0\.50"\]/);
    expect(r.stdout).toMatch(/cluster\s+Member\s+cp2\s+\d+\s+cp2\s+controlplane/);
    const via2 = await until(['-n', addr[1]!, 'get', 'members'], config, (x) => /cp1/.test(x.stdout) && /cp2/.test(x.stdout), 20_000);
    expect(via2.code).toBe(0);
    // The worker runs no etcd: it said Hello to trustd on cp1 (join token), and sees all three.
    const all = (x: CliResult) => x.code === 0 && ['cp1', 'cp2', 'w1'].every((h) => new RegExp(`Member\\s+${h}\\s`).test(x.stdout));
    const viaWorker = await until(['-n', workerAddr, 'get', 'members'], config, all, 20_000);
    expect(viaWorker.stdout).toMatch(/cluster\s+Member\s+w1\s+\d+\s+w1\s+worker\s+Bronze \(v[^)]+\)\s+\["127\.0\.0\.52"\]/);
    expect(viaWorker.stdout).toMatch(/Member\s+cp1\s+\d+\s+cp1\s+controlplane/);
    const viaCp1 = await until(['-n', addr[0]!, 'get', 'members'], config, all, 20_000);
    expect(all(viaCp1)).toBe(true);
    // etcd is a control plane's: the worker says so.
    const wm = await bronzectl(['-n', workerAddr, 'etcd', 'members'], { config });
    expect(wm.code).toBe(1);
    expect(wm.stderr).toMatch(/member list is only available on control plane nodes/);
    const wb = await bronzectl(['-n', workerAddr, 'bootstrap'], { config });
    expect(wb.code).toBe(1);
    expect(wb.stderr).toMatch(/bootstrap is only available on control plane nodes/);
  }, 60_000);

  it('health: discovers the nodes from the members, and every check passes, each reported as it goes', async () => {
    const r = await bronzectl(['health', '--wait-timeout', '60s'], { config, timeoutMs: 90_000 });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('discovered nodes: {"controlplane":["127.0.0.50","127.0.0.51"],"worker":["127.0.0.52"]}');
    for (const check of ['etcd to be healthy', 'etcd members to be consistent across nodes', 'etcd members to be control plane nodes', 'apid to be ready', "all nodes' services to be running and healthy", 'every node to see every node as a member']) {
      expect(r.stdout).toContain(`waiting for ${check}: ...\nwaiting for ${check}: OK`);
    }
  }, 100_000);

  it('etcd status and a snapshot (with a marker key written straight to etcd before it)', async () => {
    const tls = await etcdClientTls();
    const etcd = new EtcdClient([`${addr[0]}:2379`], tls);
    try {
      await etcd.put('/it/marker', 'from the first cluster');
    } finally {
      etcd.close();
    }
    const st = await bronzectl(['-n', addr[0]!, 'etcd', 'status'], { config });
    expect(st.code).toBe(0);
    expect(st.stdout).toMatch(/^NODE\s+MEMBER\s+DB SIZE\s+IN USE\s+LEADER\s+RAFT INDEX/);
    expect(rows(st.stdout)).toHaveLength(1);
    const file = snapshotFile();
    const snap = await bronzectl(['-n', addr[0]!, 'etcd', 'snapshot', file], { config });
    expect(snap.stderr).toBe('');
    expect(snap.stdout).toMatch(/etcd snapshot saved to ".*snap\.db" \(\d+ bytes\)/);
    expect(fs.statSync(file).size % 512).toBe(32);
  });

  it('bootstrap --recover-from: a new control plane (its own endpoint) starts a new cluster from the snapshot', async () => {
    const cfg3 = generateConfigs({ clusterName: 'etcd-it-recovered', endpoint: `https://${recoverAddr}:6443`, secrets });
    const cp3 = new HostNode({
      name: 'cp3',
      address: recoverAddr,
      apiPort: port,
      config: cfg3.controlplane,
      services: ['apid', 'etcd'],
      env: { BRONZE_HOSTNAME: 'cp3', BRONZE_NODE_ID: 'node-cp3', BRONZE_ETCD_ADDRESS: recoverAddr, BRONZE_ETCD_BIN: ETCD, BRONZE_ETCDCTL_BIN: ETCDCTL, BRONZE_REGISTRY_INTERVAL_MS: '1000' },
    });
    cp3.o.env!.BRONZE_ETCD_DIR = path.join(cp3.dir, 'etcd');
    nodes.push(cp3.start());
    await cp3.waitFor(/serving the API on/, 60_000);
    await cp3.waitFor(/service etcd: Preparing: Waiting for bootstrap/, 30_000);
    const missing = await bronzectl(['-n', recoverAddr, 'bootstrap', '--recover-from', path.join(dir, 'nope.db')], { config });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/--recover-from .*nope\.db: no such file/);
    const r = await bronzectl(['-n', recoverAddr, 'bootstrap', '--recover-from', snapshotFile()], { config });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const m = await until(['-n', recoverAddr, 'etcd', 'members'], config, (x) => x.code === 0 && rows(x.stdout).length === 1, 60_000);
    expect(rows(m.stdout)[0]![2]).toBe('cp3');
    expect(rows(m.stdout)[0]![3]).toBe(`https://${recoverAddr}:2380`);
    // The data is the first cluster's: the marker is there.
    const etcd = new EtcdClient([`${recoverAddr}:2379`], await etcdClientTls());
    try {
      const kvs = await etcd.get('/it/marker');
      expect(kvs.map((kv) => kv.value.toString())).toEqual(['from the first cluster']);
    } finally {
      etcd.close();
    }
    // A node that is a member refuses another upload.
    const again = await bronzectl(['-n', recoverAddr, 'bootstrap', '--recover-from', snapshotFile()], { config });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/etcd data directory is not empty/);
  }, 120_000);

  it('quorum: with two voters neither may reboot or upgrade (refused, with the reason and the way to force it)', async () => {
    const r = await bronzectl(['-n', addr[0]!, 'reboot'], { config });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/reboot would break etcd quorum: 1 of the other 1 voting member is healthy, 2 of 2 must stay up \(--mode force does it anyway\)/);
    // An upgrade likewise, before anything is fetched or written.
    const u = await bronzectl(['-n', addr[0]!, 'upgrade', '--image', 'http://127.0.0.1:9/never.tar'], { config });
    expect(u.code).toBe(1);
    expect(u.stderr).toMatch(/upgrade would break etcd quorum: 1 of the other 1 voting member is healthy, 2 of 2 must stay up \(--force does it anyway\)/);
    // The node is still up and serving.
    expect((await bronzectl(['-n', addr[0]!, 'version'], { config })).code).toBe(0);
  });

  it('remove-member refuses an unknown id; leave takes cp2 out, and the last member may not leave', async () => {
    const bad = await bronzectl(['-n', addr[0]!, 'etcd', 'remove-member', 'abc'], { config });
    expect(bad.code, bad.stderr).toBe(1);
    expect(bad.stderr).toMatch(/etcd member abc not found \(members: /);
    // The leave checks both members answer first; on a loaded machine one may be slow for a moment.
    const leave = await until(['-n', addr[1]!, 'etcd', 'leave'], config, (x) => x.code === 0, 20_000);
    expect(leave.stderr).toBe('');
    expect(leave.code).toBe(0);
    const r = await until(['-n', addr[0]!, 'etcd', 'members'], config, (x) => x.code === 0 && rows(x.stdout).length === 1, 20_000);
    expect(rows(r.stdout).map((row) => row[2])).toEqual(['cp1']);
    const last = await bronzectl(['-n', addr[0]!, 'etcd', 'leave'], { config });
    expect(last.code).toBe(1);
    expect(last.stderr).toMatch(/leaving etcd would remove the only etcd member/);
    // health names what is wrong now: cp2 is a control plane without an etcd member.
    const h = await bronzectl(['health', '--wait-timeout', '3s', '--control-plane-nodes', addr.join(',')], { config });
    expect(h.code).toBe(1);
    expect(h.stderr).toMatch(/waiting for etcd to be healthy: 127\.0\.0\.51: etcd status: etcd is not running on this node/);
  }, 60_000);
});
