// Issue 50, item 1: what a holder of the join token can do to the cluster registry through
// trustd. Real pieces: Debian's etcd (mutual TLS, started here), the real trustd process over
// mTLS on 127.0.0.60, and machined's registry handler on machined's unix socket (in this
// process, with the control plane's etcd credentials); then a real worker node (machined and
// apid) that gets its certificate from that trustd and registers.
//
// Each abuse is tried with a certificate trustd really issued for the token, and shown refused
// with nothing written: etcd's revision, its DB size (Status dbSize) and every registry key the
// same before and after. Abuses that fail are sent from their own source addresses (127.0.0.7x),
// so that trustd's per-address limit on failures is seen by itself and by nothing else.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { serviceClient, serviceDefinition } from '../../src/contract/protos.ts';
import { newCA } from '../../src/pki/ca.ts';
import { issuePeerCert, issueServerCert, newCSR } from '../../src/pki/certs.ts';
import { generateKeyPair, privateKeyToPem } from '../../src/pki/keys.ts';
import { EtcdClient, type EtcdTls } from '../../src/etcd/client.ts';
import { PeerCredentials } from '../../src/lib/peer-credentials.ts';
import { MemoryState } from '../../src/state/memory.ts';
import { ClusterRegistry, REGISTRY_PREFIX, WORKER_PREFIX, registryHandlers } from '../../src/machined/cluster/registry.ts';
import { loadOrCreateMemberId } from '../../src/machined/cluster/member-id.ts';
import { CLUSTER_NAMESPACE, MEMBER_TYPE, type MemberSpec } from '../../src/contract/resources/member.ts';
import { workerIdFromKey } from '../../src/trustd/worker-identity.ts';
import { HostNode } from '../lib/nodes.ts';
import { freePort } from '../lib/ports.ts';
import { bundledBinary } from '../lib/bundle.ts';
import { bronzectl } from '../lib/bronzectl.ts';

const ETCD = '/usr/bin/etcd';
const haveEtcd = fs.existsSync(ETCD);
const CP = '127.0.0.60';
const WORKER = '127.0.0.61';
const MAX_WORKERS = 3;

/** The SMBIOS UUID of this host, when it has one we may read: it must appear nowhere. */
function smbiosUuid(): string | undefined {
  try {
    const u = fs.readFileSync('/sys/class/dmi/id/product_uuid', 'utf8').trim();
    return u || undefined;
  } catch {
    return undefined;
  }
}

type Reply = { members?: Array<Record<string, unknown>> };
type HelloResult = { err?: grpc.ServiceError; res?: Reply };

describe.skipIf(!haveEtcd)('the cluster registry through trustd: a join token describes only its caller (real etcd, real trustd, mTLS)', () => {
  let dir: string;
  let etcdProc: ChildProcess;
  let etcdTls: EtcdTls;
  let etcdEndpoint: string;
  let trustd: ChildProcess;
  const trustdOut: string[] = [];
  let trustdPort: number;
  let machined: grpc.Server;
  let registry: ClusterRegistry;
  let secrets: Awaited<ReturnType<typeof generateSecrets>>;
  let cpMember: MemberSpec;
  let worker: HostNode | undefined;
  const proxies: net.Server[] = [];
  const etcd = () => new EtcdClient([etcdEndpoint], etcdTls);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-registry-abuse-'));
    // etcd, as a control plane runs it: client TLS with client certificates from the etcd CA.
    const etcdCA = await newCA({ commonName: 'etcd', validityDays: 1 });
    const peer = await issuePeerCert(etcdCA, { commonName: 'etcd-member', ipAddresses: ['127.0.0.1'], ttlMs: 3600_000 });
    etcdTls = { ca: etcdCA.crt, cert: peer.crt, key: peer.key };
    for (const [f, v] of [['ca.crt', etcdCA.crt], ['peer.crt', peer.crt], ['peer.key', peer.key]] as const) fs.writeFileSync(path.join(dir, f), v, { mode: 0o600 });
    const [clientPort, peerPort] = [await freePort(), await freePort()];
    etcdEndpoint = `127.0.0.1:${clientPort}`;
    etcdProc = spawn(ETCD, [
      '--name=abuse',
      `--data-dir=${path.join(dir, 'etcd')}`,
      `--listen-client-urls=https://127.0.0.1:${clientPort}`,
      `--advertise-client-urls=https://127.0.0.1:${clientPort}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=abuse=http://127.0.0.1:${peerPort}`,
      `--cert-file=${path.join(dir, 'peer.crt')}`,
      `--key-file=${path.join(dir, 'peer.key')}`,
      `--trusted-ca-file=${path.join(dir, 'ca.crt')}`,
      '--client-cert-auth',
    ], { stdio: 'ignore' });
    for (let i = 0; ; i++) {
      const c = etcd();
      try {
        await c.status(etcdEndpoint, 2000);
        break;
      } catch (err) {
        if (i > 100) throw err;
        await new Promise((r) => setTimeout(r, 200));
      } finally {
        c.close();
      }
    }

    // The control plane's secrets, as machined writes them for trustd.
    secrets = await generateSecrets();
    const cpDir = path.join(dir, 'cp');
    const os_ = secrets.certs.os;
    const serving = await issueServerCert(os_, { commonName: 'cp1', ipAddresses: [CP, '127.0.0.1'], ttlMs: 3600_000 });
    const files: Record<string, string> = {
      'trustd/ca.crt': os_.crt,
      'trustd/ca.key': os_.key,
      'trustd/token': secrets.trustdinfo.token,
      'apid/ca.crt': os_.crt,
      'apid/server.crt': serving.crt,
      'apid/server.key': serving.key!,
    };
    for (const [f, v] of Object.entries(files)) {
      fs.mkdirSync(path.join(cpDir, 'secrets', path.dirname(f)), { recursive: true });
      fs.writeFileSync(path.join(cpDir, 'secrets', f), v, { mode: 0o600 });
    }

    // machined's side: the registry handler on machined's socket, writing with the control plane's etcd credentials.
    registry = new ClusterRegistry({ log: { info() {}, warn() {} } as never, state: new MemoryState(), self: () => undefined, etcd: async () => undefined });
    machined = new grpc.Server();
    machined.addService(serviceDefinition('bronze.cluster.Registry'), registryHandlers({ registry, etcd: async () => etcd(), maxWorkers: MAX_WORKERS }));
    const sock = path.join(cpDir, 'run', 'machined', 'machined.sock');
    fs.mkdirSync(path.dirname(sock), { recursive: true });
    await new Promise<void>((resolve, reject) => machined.bindAsync(`unix:${sock}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));

    // The control plane's own record, written as control planes write theirs: with etcd credentials, its id random, from STATE.
    cpMember = { nodeId: loadOrCreateMemberId(path.join(cpDir, 'state')), addresses: [CP], hostname: 'cp1', machineType: 'controlplane', operatingSystem: 'Bronze (test)' };
    const c = etcd();
    try {
      await registry.hello(c, cpMember, 3600_000);
    } finally {
      c.close();
    }

    // The real trustd.
    trustdPort = await freePort();
    trustd = spawn(process.execPath, [bundledBinary(), 'trustd'], {
      env: { ...process.env, BRONZE_RUN_DIR: path.join(cpDir, 'run'), BRONZE_SECRETS_DIR: path.join(cpDir, 'secrets'), BRONZE_TRUSTD_LISTEN: `${CP}:${trustdPort}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (d: Buffer) => trustdOut.push(...d.toString().split('\n').filter(Boolean));
    trustd.stdout!.on('data', collect);
    trustd.stderr!.on('data', collect);
    const deadline = Date.now() + 60_000;
    while (!trustdOut.some((l) => /signing certificates on/.test(l))) {
      if (trustd.exitCode !== null || Date.now() > deadline) throw new Error(`trustd did not start:\n${trustdOut.join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 180_000);

  afterAll(async () => {
    await worker?.stop();
    for (const p of proxies) p.close();
    trustd?.kill('SIGTERM');
    machined?.forceShutdown();
    etcdProc?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A TCP relay to trustd whose connections to it come from `source` (127.0.0.x): that caller's address. */
  async function via(source: string): Promise<number> {
    const srv = net.createServer((c) => {
      const up = net.connect({ host: CP, port: trustdPort, localAddress: source });
      c.pipe(up).pipe(c);
      const end = () => (c.destroy(), up.destroy());
      c.on('error', end);
      up.on('error', end);
      c.on('close', end);
      up.on('close', end);
    });
    proxies.push(srv);
    await new Promise<void>((r) => srv.listen(0, CP, () => r()));
    return (srv.address() as net.AddressInfo).port;
  }

  /** A key and the certificate trustd signs for it with the join token: what any token holder can get. */
  async function tokenCertificate(name: string): Promise<{ crt: string; key: string }> {
    const keys = await generateKeyPair();
    const csr = await newCSR(keys, { commonName: name, ipAddresses: ['10.9.9.9'] });
    const Security = serviceClient('securityapi.SecurityService');
    const client = new Security(`${CP}:${trustdPort}`, new PeerCredentials(Buffer.from(secrets.certs.os.crt))) as any;
    const md = new grpc.Metadata();
    md.set('token', secrets.trustdinfo.token);
    try {
      const res = await new Promise<{ crt: Buffer }>((resolve, reject) => client.Certificate({ csr: Buffer.from(csr) }, md, (e: Error | null, r: { crt: Buffer }) => (e ? reject(e) : resolve(r))));
      return { crt: Buffer.from(res.crt).toString(), key: await privateKeyToPem(keys.privateKey) };
    } finally {
      client.close();
    }
  }

  const idOf = (crt: string) => workerIdFromKey(new crypto.X509Certificate(crt).publicKey).nodeId;

  /** Hello to trustd (through `port`, default trustd itself), presenting `cert` when given. */
  async function hello(req: object, o: { cert?: { crt: string; key: string }; port?: number; token?: string } = {}): Promise<HelloResult> {
    const Registry = serviceClient('bronze.cluster.Registry');
    const creds = o.cert ? new PeerCredentials(Buffer.from(secrets.certs.os.crt), Buffer.from(o.cert.key), Buffer.from(o.cert.crt)) : new PeerCredentials(Buffer.from(secrets.certs.os.crt));
    const client = new Registry(`${CP}:${o.port ?? trustdPort}`, creds, { 'grpc.max_send_message_length': -1 }) as any;
    const md = new grpc.Metadata();
    md.set('token', o.token ?? secrets.trustdinfo.token);
    try {
      return await new Promise((resolve) => client.Hello(req, md, { deadline: Date.now() + 15_000 }, (err: grpc.ServiceError | null, res: Reply) => resolve(err ? { err } : { res })));
    } finally {
      client.close();
    }
  }

  /** What etcd holds: its revision, its DB size, and every registry key with its revision and value. */
  async function snapshot(): Promise<{ revision: string; dbSize: number; keys: string[] }> {
    const c = etcd();
    try {
      // etcd commits its backend in batches (every 100 ms): the size once it has settled.
      let st = await c.status(etcdEndpoint);
      for (;;) {
        await new Promise((r) => setTimeout(r, 250));
        const next = await c.status(etcdEndpoint);
        if (next.dbSize === st.dbSize) break;
        st = next;
      }
      const all = await c.call('KV', 'Range', { key: Buffer.from('/'), range_end: Buffer.from([0]) });
      const keys = (all.kvs ?? []).map((kv: any) => `${Buffer.from(kv.key)}@${kv.mod_revision}=${crypto.createHash('sha256').update(Buffer.from(kv.value ?? [])).digest('hex').slice(0, 16)}`);
      return { revision: String(all.header.revision), dbSize: st.dbSize, keys };
    } finally {
      c.close();
    }
  }

  async function workerKeys(): Promise<Array<{ key: string; value: any; lease: string }>> {
    const c = etcd();
    try {
      return (await c.get(WORKER_PREFIX)).map((kv) => ({ key: kv.key, value: JSON.parse(kv.value.toString()), lease: kv.lease }));
    } finally {
      c.close();
    }
  }

  /** `fn`'s Hello is refused with `code` and `details`, and etcd is exactly as it was. */
  async function refusedNothingWritten(fn: () => Promise<HelloResult>, code: grpc.status, details: RegExp): Promise<void> {
    const before = await snapshot();
    const r = await fn();
    expect(r.res, 'the call was refused').toBeUndefined();
    expect(r.err?.code, r.err?.details).toBe(code);
    expect(r.err?.details).toMatch(details);
    expect(await snapshot()).toEqual(before);
  }

  const member = (over: Record<string, unknown> = {}) => ({ addresses: [{ ip: Buffer.from([10, 9, 9, 9]) }], hostname: 'attacker', operating_system: 'Bronze', ...over });
  /** Checks a reply names no node id: not the control plane's, not the host's SMBIOS UUID, none at all. */
  function expectNoIds(res: Reply | undefined) {
    expect(res?.members?.length).toBeGreaterThan(0);
    for (const m of res!.members!) expect(m.node_id ?? '').toBe('');
    const text = JSON.stringify(res);
    expect(text).not.toContain(cpMember.nodeId);
    const uuid = smbiosUuid();
    if (uuid) expect(text.toLowerCase()).not.toContain(uuid.toLowerCase());
  }

  it("each abuse with a token certificate is refused, with nothing written: another node's id, controlplane, a huge TTL, many addresses, a huge record", async () => {
    const cert = await tokenCertificate('attacker');
    const port = await via('127.0.0.71');
    const as = (req: object) => () => hello(req, { cert, port });
    // Another node's id: the control plane's (its record would be overwritten).
    await refusedNothingWritten(as({ member: member({ node_id: cpMember.nodeId, hostname: 'cp1', addresses: [{ ip: Buffer.from([10, 6, 6, 6]) }] }) }), grpc.status.PERMISSION_DENIED, /node_id is the caller's, derived from its certificate/);
    // A control plane.
    await refusedNothingWritten(as({ member: member({ machine_type: 'TYPE_CONTROL_PLANE' }) }), grpc.status.PERMISSION_DENIED, /registers as a worker only/);
    await refusedNothingWritten(as({ member: member({ machine_type: 'TYPE_INIT' }) }), grpc.status.PERMISSION_DENIED, /registers as a worker only/);
    // A lease that never ends (the review's 9,000,000,000 s).
    await refusedNothingWritten(as({ member: member(), ttl_seconds: '9000000000' }), grpc.status.INVALID_ARGUMENT, /ttl_seconds 9000000000 is over the limit of 40 s/);
    // Many addresses (the review's records had tens of thousands).
    const many = Array.from({ length: 5000 }, (_, i) => ({ ip: Buffer.from([10, (i >> 8) & 255, i & 255, 1]) }));
    await refusedNothingWritten(as({ member: member({ addresses: many }) }), grpc.status.INVALID_ARGUMENT, /5000 addresses; at most 16/);
    await refusedNothingWritten(as({ member: member({ addresses: [{ ip: Buffer.alloc(7) }] }) }), grpc.status.INVALID_ARGUMENT, /addresses\[0\] is not an IPv4 or IPv6 address/);
    // A huge record: ~820 KiB is refused before it is even read whole; under trustd's message cap, by the record's caps.
    await refusedNothingWritten(as({ member: member({ operating_system: 'x'.repeat(820 * 1024) }) }), grpc.status.RESOURCE_EXHAUSTED, /larger than max/);
    await refusedNothingWritten(as({ member: member({ operating_system: 'x'.repeat(30_000) }) }), grpc.status.INVALID_ARGUMENT, /operating_system is 30000 characters long; at most 128/);
    await refusedNothingWritten(as({ member: member({ hostname: 'h'.repeat(300) }) }), grpc.status.INVALID_ARGUMENT, /hostname is 300 characters long; at most 253/);
    expect(await workerKeys()).toEqual([]);
  }, 60_000);

  it('without a certificate trustd issued, or without the token, nothing is written; an address that keeps failing is refused at once', async () => {
    const port = await via('127.0.0.72');
    // The token alone (no client certificate) no longer writes.
    await refusedNothingWritten(() => hello({ member: member() }, { port }), grpc.status.UNAUTHENTICATED, /no client certificate: present the API certificate trustd issued/);
    // A certificate of another CA.
    const foreignCA = await newCA({ commonName: 'not this cluster', validityDays: 1 });
    const foreign = await issueServerCert(foreignCA, { commonName: 'x', ttlMs: 3600_000 });
    await refusedNothingWritten(() => hello({ member: member() }, { port, cert: { crt: foreign.crt, key: foreign.key! } }), grpc.status.UNAUTHENTICATED, /was not issued by this cluster's OS CA/);
    // A token certificate with a wrong token.
    const cert = await tokenCertificate('t');
    await refusedNothingWritten(() => hello({ member: member() }, { port, cert, token: 'abcdef.0123456789abcdef' }), grpc.status.PERMISSION_DENIED, /the join token is not valid/);
    // Keep failing from one address: past the burst (10 failures), even a valid call from it is refused at once.
    const results: Array<grpc.status | undefined> = [];
    for (let i = 0; i < 12; i++) results.push((await hello({ member: member() }, { port, cert, token: 'abcdef.0123456789abcdef' })).err?.code);
    expect(results.slice(-2)).toEqual([grpc.status.RESOURCE_EXHAUSTED, grpc.status.RESOURCE_EXHAUSTED]);
    await refusedNothingWritten(() => hello({ member: member() }, { port, cert }), grpc.status.RESOURCE_EXHAUSTED, /too many failed calls from 127\.0\.0\.72; retry in \d+ s/);
    // Another address is not affected (a wrong token from it is refused for the token, not the rate).
    const other = await via('127.0.0.73');
    await refusedNothingWritten(() => hello({ member: member() }, { port: other, cert, token: 'abcdef.0123456789abcdef' }), grpc.status.PERMISSION_DENIED, /not valid/);
    expect(await workerKeys()).toEqual([]);
  }, 60_000);

  it('a flood of calls from one certificate: a burst is served, the rest refused with nothing written', async () => {
    const cert = await tokenCertificate('flooder');
    const port = await via('127.0.0.74');
    let served = 0;
    let refused = 0;
    const started = Date.now();
    for (let i = 0; i < 25; i++) {
      const before = await snapshot();
      const r = await hello({ member: member({ hostname: 'flooder' }), ttl_seconds: 40 }, { cert, port });
      const after = await snapshot();
      if (r.res) {
        served++;
        expectNoIds(r.res);
        expect(BigInt(after.revision) - BigInt(before.revision)).toBe(1n); // its own record, refreshed
      } else {
        refused++;
        expect(r.err?.code, r.err?.details).toBe(grpc.status.RESOURCE_EXHAUSTED);
        expect(r.err?.details).toMatch(/Hello from w-[0-9a-f]{32}: at most 5 calls at once and one every 2 s; retry in \d+ s/);
        expect(after).toEqual(before);
      }
    }
    expect(served).toBeGreaterThanOrEqual(5);
    expect(served).toBeLessThanOrEqual(5 + Math.ceil((Date.now() - started) / 2000)); // the burst, and what refilled while the calls ran
    expect(refused).toBe(25 - served);
    // One record, the caller's: its id from its certificate, a worker.
    const keys = await workerKeys();
    expect(keys.map((k) => k.key)).toEqual([WORKER_PREFIX + idOf(cert.crt)]);
    expect(keys[0]!.value).toEqual({ nodeId: idOf(cert.crt), addresses: ['10.9.9.9'], hostname: 'flooder', machineType: 'worker', operatingSystem: 'Bronze' });
  }, 60_000);

  it("many certificates (new ids) fill the registry to its limit, then new ids are refused with nothing written; a worker's hostname never displaces a control plane's", async () => {
    const have = (await workerKeys()).length; // the flooder's, still leased
    expect(have).toBe(1);
    const accepted: string[] = [];
    // The first claims the control plane's hostname (and another address): its own record, never the control plane's.
    const impostor = await tokenCertificate('impostor');
    const first = await hello({ member: member({ hostname: 'cp1', addresses: [{ ip: Buffer.from([10, 6, 6, 6]) }] }), ttl_seconds: 40 }, { cert: impostor });
    expect(first.err).toBeUndefined();
    expectNoIds(first.res);
    accepted.push(idOf(impostor.crt));
    // The control plane's record is untouched, and the Members say cp1 is the control plane at its address.
    const c = etcd();
    try {
      const cpRecord = await c.get(REGISTRY_PREFIX + cpMember.nodeId);
      expect(JSON.parse(cpRecord[0]!.value.toString())).toEqual(cpMember);
      const state = new MemoryState();
      const view = new ClusterRegistry({ log: { info() {}, warn() {} } as never, state, self: () => undefined, etcd: async () => undefined });
      await view.publish(await view.list(c));
      const cp1 = (await state.list<MemberSpec>(CLUSTER_NAMESPACE, MEMBER_TYPE)).find((r) => r.metadata.id === 'cp1');
      expect(cp1?.spec).toEqual(cpMember);
    } finally {
      c.close();
    }
    for (let i = 0; accepted.length + have < MAX_WORKERS; i++) {
      const cert = await tokenCertificate(`many${i}`);
      const r = await hello({ member: member({ hostname: `many${i}` }), ttl_seconds: 40 }, { cert });
      expect(r.err).toBeUndefined();
      accepted.push(idOf(cert.crt));
    }
    expect((await workerKeys()).length).toBe(MAX_WORKERS);
    for (let i = 0; i < 3; i++) {
      const cert = await tokenCertificate(`over${i}`);
      await refusedNothingWritten(() => hello({ member: member({ hostname: `over${i}` }), ttl_seconds: 40 }, { cert }), grpc.status.RESOURCE_EXHAUSTED, /the registry holds 3 worker records, its limit; w-[0-9a-f]{32} is not added/);
    }
    // A worker already in the registry still refreshes its record.
    const again = await hello({ member: member({ hostname: 'cp1', addresses: [{ ip: Buffer.from([10, 6, 6, 6]) }] }), ttl_seconds: 40 }, { cert: impostor });
    expect(again.err).toBeUndefined();
    expect((await workerKeys()).map((k) => k.key.slice(WORKER_PREFIX.length)).sort()).toEqual(expect.arrayContaining(accepted));
  }, 60_000);

  it('a legitimate worker still registers (its id from its certificate, its member id random in its STATE) and sees the members, without their ids', async () => {
    // Room in the registry again: the records above live 40 s at most (etcd revokes a lease within a second or so of its end).
    for (let i = 0; (await workerKeys()).length > 0; i++) {
      if (i > 46) throw new Error('the leased worker records did not expire within 46 s of their last refresh');
      await new Promise((r) => setTimeout(r, 1000));
    }
    const cfg = generateConfigs({ clusterName: 'abuse', endpoint: `https://${CP}:6443`, secrets });
    const apiPort = await freePort();
    worker = new HostNode({
      name: 'w1',
      address: WORKER,
      apiPort,
      config: cfg.worker,
      services: ['apid'],
      env: { BRONZE_HOSTNAME: 'w1', BRONZE_TRUSTD_PORT: String(trustdPort), BRONZE_REGISTRY_INTERVAL_MS: '3000' },
    }).start();
    await worker.waitFor(/serving the API on/, 60_000);
    const workerCert = () => fs.readFileSync(path.join(worker!.dir, 'secrets', 'apid', 'server.crt'), 'utf8');
    let keys: Awaited<ReturnType<typeof workerKeys>> = [];
    for (let i = 0; i < 60 && keys.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      keys = await workerKeys();
    }
    const memberId = fs.readFileSync(path.join(worker.dir, 'state', 'member-id'), 'utf8').trim();
    expect(memberId).toMatch(/^[0-9a-f]{32}$/);
    expect(fs.statSync(path.join(worker.dir, 'state', 'member-id')).mode & 0o777).toBe(0o600);
    expect(keys.map((k) => k.key)).toEqual([WORKER_PREFIX + idOf(workerCert())]);
    expect(keys[0]!.value).toEqual({ nodeId: idOf(workerCert()), addresses: [WORKER], hostname: 'w1', machineType: 'worker', operatingSystem: expect.stringMatching(/^Bronze \(/) });
    // Through its apid: every member, the control plane as one, its own record with its own member id, the others without ids.
    const config = path.join(dir, 'bronzeconfig');
    await save(config, await newClientConfig({ contextName: 'abuse', endpoints: [worker.endpoint], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
    let out = '';
    for (let i = 0; i < 20; i++) {
      const r = await bronzectl(['-n', WORKER, 'get', 'members', '-o', 'json'], { config });
      out = r.stdout;
      if (r.code === 0 && out.includes('"cp1"') && out.includes('"w1"')) break;
      await new Promise((res) => setTimeout(res, 1000));
    }
    const specs = out
      .trim()
      .split(/\n(?=\{)/)
      .map((t) => JSON.parse(t))
      .map((r: any) => r.spec);
    const byHost = Object.fromEntries(specs.map((s: any) => [s.hostname, s]));
    expect(byHost.cp1).toMatchObject({ machineType: 'controlplane', addresses: [CP] });
    expect(byHost.cp1.nodeId ?? '').toBe('');
    expect(byHost.w1).toMatchObject({ machineType: 'worker', addresses: [WORKER], nodeId: memberId });
    const uuid = smbiosUuid();
    if (uuid) expect(out.toLowerCase()).not.toContain(uuid.toLowerCase());
    expect(out).not.toContain(cpMember.nodeId);
    // The worker's log says nothing of refusals.
    expect(worker.output.filter((l) => /cluster registry: /.test(l))).toEqual([]);
  }, 240_000);
});
