// `node` routing through two real apids (real processes, real mTLS): a call to node A naming
// node B reaches B's daemons through B's apid. Replies with room for a node's metadata come
// back stamped with B (a unary envelope, a server stream; a bidi stream reaches B and its
// answer comes back named by B); COSI
// State replies (Get, List, Watch), which have no such room, come back byte for byte as B
// sends them to a direct caller. Every reply is checked strictly against the project's protos
// (an unknown field or a wrong wire type fails), which is how a Talos client reads it.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type protobuf from 'protobufjs/light.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { protoRoot } from '../../src/contract/protos.ts';
import { generateSecrets, type SecretsBundle } from '../../src/contract/secrets.ts';
import { issueClientCert } from '../../src/pki/certs.ts';
import { bronzectl } from '../lib/bronzectl.ts';
import { HostNode } from '../lib/nodes.ts';
import { freePort } from '../lib/ports.ts';
import { strictDecode } from '../lib/strict-decode.ts';

const raw = (b: Buffer) => b;
const root = protoRoot();
const T = (name: string) => root.lookupType(name);
const enc = (type: string, obj: object) => Buffer.from(T(type).encode(T(type).fromObject(obj)).finish());
const dec = (type: protobuf.Type, b: Uint8Array) => type.toObject(type.decode(b), { longs: String, enums: String, defaults: false }) as Record<string, any>;

function md(key?: 'node' | 'nodes', values: string[] = []): grpc.Metadata {
  const m = new grpc.Metadata();
  for (const v of values) m.add(key!, v);
  return m;
}

describe('node routing through two real apids', () => {
  let secrets: SecretsBundle;
  let a: HostNode;
  let b: HostNode;
  let creds: grpc.ChannelCredentials;
  let client: grpc.Client;
  let direct: grpc.Client;
  let dir: string;
  /** bronzectl's client config: admin, endpoint A. */
  let config: string;

  const unary = (c: grpc.Client, p: string, req: Buffer, m = md()) =>
    new Promise<Buffer>((resolve, reject) => c.makeUnaryRequest(p, raw, raw, req, m, { deadline: Date.now() + 20_000 }, (e, r) => (e ? reject(e) : resolve(r!))));

  /** A server stream's messages; `count` ends it (cancels) after that many. */
  const stream = (c: grpc.Client, p: string, req: Buffer, m = md(), count = Infinity) =>
    new Promise<Buffer[]>((resolve, reject) => {
      const out: Buffer[] = [];
      const s = c.makeServerStreamRequest(p, raw, raw, req, m, { deadline: Date.now() + 20_000 });
      s.on('data', (d: Buffer) => {
        out.push(d);
        if (out.length === count) {
          s.cancel();
          resolve(out);
        }
      });
      s.on('error', (e: grpc.ServiceError) => (e.code === grpc.status.CANCELLED && out.length >= count ? undefined : reject(Object.assign(e, { got: out }))));
      s.on('end', () => resolve(out));
    });

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-routing-'));
    const port = await freePort();
    secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'rt', endpoint: 'https://127.0.0.40:6443', secrets });
    a = new HostNode({ name: 'rta', address: '127.0.0.40', apiPort: port, config: cfg.controlplane, services: ['apid'] }).start();
    b = new HostNode({ name: 'rtb', address: '127.0.0.41', apiPort: port, config: cfg.controlplane, services: ['apid'] }).start();
    await Promise.all([a.waitFor(/serving the API on/, 60_000), b.waitFor(/serving the API on/, 60_000)]);
    const admin = await issueClientCert(secrets.certs.os, { commonName: 'admin', roles: ['os:admin'], ttlMs: 3600_000 });
    creds = grpc.credentials.createSsl(Buffer.from(secrets.certs.os.crt), Buffer.from(admin.key), Buffer.from(admin.crt));
    client = new grpc.Client(a.endpoint, creds);
    direct = new grpc.Client(b.endpoint, creds);
    config = path.join(dir, 'bronzeconfig');
    await save(config, await newClientConfig({ contextName: 'rt', endpoints: [a.endpoint], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
  }, 120_000);

  afterAll(async () => {
    client?.close();
    direct?.close();
    await Promise.all([a?.stop(), b?.stop()]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('unary: Version through A for B is B\'s reply, stamped with B; through `nodes` for both', async () => {
    const one = await unary(client, '/machine.MachineService/Version', Buffer.alloc(0), md('node', [b.o.address]));
    strictDecode(T('machine.VersionResponse'), one);
    const r = dec(T('machine.VersionResponse'), one);
    expect(r.messages.map((m: any) => m.metadata.hostname)).toEqual([b.o.address]);
    expect(r.messages[0].version.tag).toMatch(/^v\d/);
    const many = await unary(client, '/machine.MachineService/Version', Buffer.alloc(0), md('nodes', [a.o.address, b.o.address]));
    strictDecode(T('machine.VersionResponse'), many);
    expect(dec(T('machine.VersionResponse'), many).messages.map((m: any) => m.metadata.hostname).sort()).toEqual([a.o.address, b.o.address]);
  });

  it('server stream: List and Logs through A for B, every message stamped with B', async () => {
    const root = path.join(dir, 'list');
    fs.mkdirSync(root);
    fs.writeFileSync(path.join(root, 'f1'), 'x');
    fs.writeFileSync(path.join(root, 'f2'), 'y');
    const list = await stream(client, '/machine.MachineService/List', enc('machine.ListRequest', { root }), md('node', [b.o.address]));
    expect(list.length).toBe(3); // the root, f1, f2
    for (const m of list) {
      strictDecode(T('machine.FileInfo'), m);
      expect(dec(T('machine.FileInfo'), m).metadata.hostname).toBe(b.o.address);
    }
    expect(list.map((m) => dec(T('machine.FileInfo'), m).relative_name)).toEqual(['.', 'f1', 'f2']);
    const logs = await stream(client, '/machine.MachineService/Logs', enc('machine.LogsRequest', { namespace: 'system', id: 'machined', tail_lines: 2 }), md('node', [b.o.address]));
    expect(logs.length).toBe(2);
    for (const m of logs) {
      strictDecode(T('common.Data'), m);
      expect(dec(T('common.Data'), m).metadata.hostname).toBe(b.o.address);
    }
  });

  it('bidi stream: UpgradeStream through A for B reaches B, whose answer comes back named by B', async () => {
    const s = client.makeBidiStreamRequest('/machine.MachineService/UpgradeStream', raw, raw, md('node', [b.o.address]), { deadline: Date.now() + 20_000 });
    const got: Buffer[] = [];
    const ended = new Promise<grpc.ServiceError | undefined>((resolve) => {
      s.on('data', (d: Buffer) => got.push(d));
      s.on('error', resolve);
      s.on('end', () => resolve(undefined));
    });
    const junk = Buffer.alloc(64 * 1024, 7);
    s.write(enc('machine.UpgradeStreamRequest', { request: { image: '' }, size: junk.length }));
    s.write(enc('machine.UpgradeStreamRequest', { chunk: junk }));
    s.end();
    const err = await ended;
    // A host node (not installed) refuses the upgrade before any progress, named by B; the
    // stamping of bidi progress through a second apid is src/apid/proxy.test.ts's.
    expect(err?.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(err?.details).toMatch(new RegExp(`^${b.o.address.replace(/\./g, '\\.')}: cannot upgrade: this node is not running from an installed disk`));
    for (const m of got) {
      strictDecode(T('machine.Progress'), m);
      expect(dec(T('machine.Progress'), m).metadata.hostname).toBe(b.o.address);
    }
  });

  it('COSI State: List, Get and Watch through A for B are byte for byte what B answers directly', async () => {
    const ns = 'meta';
    const type = 'ResourceDefinitions.meta.cosi.dev';
    const listReq = enc('cosi.resource.ListRequest', { namespace: ns, type });
    const routed = await stream(client, '/cosi.resource.State/List', listReq, md('node', [b.o.address]));
    const plain = await stream(direct, '/cosi.resource.State/List', listReq);
    expect(routed.length).toBeGreaterThan(3);
    expect(routed.map((x) => x.toString('base64'))).toEqual(plain.map((x) => x.toString('base64')));
    for (const m of routed) strictDecode(T('cosi.resource.ListResponse'), m);
    const first = dec(T('cosi.resource.ListResponse'), routed[0]!).resource.metadata;
    expect(first.namespace).toBe(ns);
    expect(first.type).toBe(type);
    expect(first.phase).toBe('running');

    const getReq = enc('cosi.resource.GetRequest', { namespace: ns, type, id: first.id });
    const got = await unary(client, '/cosi.resource.State/Get', getReq, md('node', [b.o.address]));
    expect(got.equals(await unary(direct, '/cosi.resource.State/Get', getReq))).toBe(true);
    strictDecode(T('cosi.resource.GetResponse'), got);

    // `node` naming A itself (the README's `bronzectl -n 127.0.0.1 get ...`) is A's plain answer too.
    expect((await unary(client, '/cosi.resource.State/Get', getReq, md('node', [a.o.address]))).equals(await unary(client, '/cosi.resource.State/Get', getReq))).toBe(true);

    // `nodes` naming B alone is the same call; naming two is refused (there is nowhere to say who answered).
    const viaNodes = await unary(client, '/cosi.resource.State/Get', getReq, md('nodes', [b.o.address]));
    expect(viaNodes.equals(got)).toBe(true);
    await expect(unary(client, '/cosi.resource.State/Get', getReq, md('nodes', [a.o.address, b.o.address]))).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: expect.stringMatching(/one node at a time/),
    });

    const watchReq = enc('cosi.resource.WatchRequest', { namespace: ns, type, options: { bootstrap_contents: true }, api_version: 1 });
    const n = plain.length + 1; // the contents, then BOOTSTRAPPED
    const w1 = await stream(client, '/cosi.resource.State/Watch', watchReq, md('node', [b.o.address]), n);
    const w2 = await stream(direct, '/cosi.resource.State/Watch', watchReq, md(), n);
    expect(w1.map((x) => x.toString('base64'))).toEqual(w2.map((x) => x.toString('base64')));
    for (const m of w1) strictDecode(T('cosi.resource.WatchResponse'), m);
    expect(dec(T('cosi.resource.WatchResponse'), w1.at(-1)!).event[0].event_type).toBe('BOOTSTRAPPED');
  });

  it('refuses `node` and `nodes` naming a port (INVALID_ARGUMENT, before dialling it): a node is reached on its API port only', async () => {
    // An os:reader probing a port of B through A: a listener there counts what reaches it.
    const reader = await issueClientCert(secrets.certs.os, { commonName: 'reader', roles: ['os:reader'], ttlMs: 3600_000 });
    const rc = new grpc.Client(a.endpoint, grpc.credentials.createSsl(Buffer.from(secrets.certs.os.crt), Buffer.from(reader.key), Buffer.from(reader.crt)));
    const probe = net.createServer((s) => s.destroy());
    let reached = 0;
    probe.on('connection', () => reached++);
    const probePort = await new Promise<number>((resolve) => probe.listen(0, b.o.address, () => resolve((probe.address() as net.AddressInfo).port)));
    try {
      for (const [key, value] of [['node', `${b.o.address}:${probePort}`], ['nodes', `${b.o.address}, ${b.o.address}:${probePort}`], ['node', `${b.o.address}:${b.o.apiPort}`]] as const) {
        await expect(unary(rc, '/machine.MachineService/Version', Buffer.alloc(0), md(key, [value]))).rejects.toMatchObject({
          code: grpc.status.INVALID_ARGUMENT,
          details: expect.stringMatching(/^node metadata names a node, not an address with a port: 127\.0\.0\.41:\d+$/),
        });
      }
      expect(reached).toBe(0);
      // The same caller naming B by its address reaches B.
      const ok = await unary(rc, '/machine.MachineService/Version', Buffer.alloc(0), md('node', [b.o.address]));
      expect(dec(T('machine.VersionResponse'), ok).messages.map((m: any) => m.metadata.hostname)).toEqual([b.o.address]);
    } finally {
      rc.close();
      probe.close();
    }
  });

  it('apid sends no TLS ServerName to a node named by its address: no DEP0123 in its log', async () => {
    await unary(client, '/machine.MachineService/Version', Buffer.alloc(0), md('node', [b.o.address]));
    const text = a.output.join('\n');
    expect(text).toMatch(/serving the API on/); // apid's own lines are in this output
    expect(text).not.toMatch(/DEP0123|ServerName to an IP address/);
  });

  it('bronzectl -n B get through A shows B\'s resources with their metadata intact', async () => {
    const r = await bronzectl(['-n', b.o.address, 'get', 'resourcedefinitions', '-o', 'yaml'], { config });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/namespace: meta/);
    expect(r.stdout).toMatch(/phase: running/);
    expect(r.stdout).not.toMatch(/phase: 7|7\.0\.0\.1/);
  });

  it('bronzectl -n B get works for every type B defines: table, -o yaml, -o json and -w', async () => {
    const rd = await bronzectl(['-n', b.o.address, 'get', 'rd', '-o', 'json'], { config });
    expect(rd.code, rd.stderr).toBe(0);
    const types = [...new Set([...rd.stdout.matchAll(/"type": "([A-Za-z]+\.[a-z0-9.]+)"/g)].map((m) => m[1]!))];
    expect(types.length).toBeGreaterThan(3);
    let watched = 0;
    await Promise.all(
      types.map(async (type) => {
        for (const format of ['table', 'yaml', 'json']) {
          const r = await bronzectl(['-n', b.o.address, 'get', type, '-o', format], { config });
          expect([type, format, r.code, r.stderr]).toEqual([type, format, 0, '']);
          expect(r.stdout).not.toMatch(/7\.0\.0\.1/);
          if (format === 'json') {
            for (const m of r.stdout.matchAll(/"node": "([^"]*)"/g)) expect(m[1]).toBe(b.o.address);
            for (const m of r.stdout.matchAll(/"phase": "([^"]*)"/g)) expect(m[1]).toBe('running');
          }
        }
        // -w: the current contents, then changes, until stopped (here: killed after 10 s: a score of
        // bronzectl processes start at once on a small machine).
        const w = await bronzectl(['-n', b.o.address, 'get', type, '-w', '-o', 'json'], { config, timeoutMs: 10_000 });
        expect([type, w.stderr]).toEqual([type, '']);
        for (const m of w.stdout.matchAll(/"node": "([^"]*)"/g)) {
          expect(m[1]).toBe(b.o.address);
          watched++;
        }
      }),
    );
    expect(watched).toBeGreaterThan(3); // resource definitions at least
  }, 120_000);
});
