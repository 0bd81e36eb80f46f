// apid's bidirectional streams (UpgradeStream) through the real ApiProxy: a fake machined on
// a unix socket in a temporary run directory, the proxy served by a grpc-js server on
// loopback (authentication stubbed: TLS is the integration test's business), a second proxy
// as "another node" on another loopback address and the same port (apid dials every node on
// the API port: node metadata names no port), and a real typed client. What must hold: bytes arrive intact and in
// order, the upload is paced by the far end (backpressure, not buffering in apid), progress
// comes back stamped when a node was named, errors and cancellation pass both ways, and a
// bidi stream never fans out.
import { silentLogger } from '../lib/log.ts';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceClient, serviceDefinition } from '../contract/protos.ts';
import { ROLES_METADATA } from './authz.ts';
import { ApiProxy } from './proxy.ts';
import { SelfIdentity } from './router.ts';

type Progress = { metadata?: { hostname?: string; error?: string } | null; stage: string; message: string; done: string; total: string };
type UploadMsg = { request?: { image: string }; size?: number; chunk?: Buffer };
type Duplex = grpc.ClientDuplexStream<UploadMsg, Progress>;
type MachineClient = grpc.Client & { UpgradeStream: (md?: grpc.Metadata) => Duplex };

const quiet = silentLogger;

/** What the fake machined saw of one UpgradeStream. */
interface Seen {
  image: string;
  size: number;
  bytes: number;
  sha256: string;
  roles: string;
  cancelled: boolean;
  done: Promise<void>;
}

function bind(server: grpc.Server, address: string): Promise<number> {
  return new Promise((resolve, reject) => server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
}

describe('apid proxies bidirectional streams to one node', () => {
  let dir: string;
  let machined: grpc.Server;
  let apid: grpc.Server;
  let peer: grpc.Server;
  let proxies: ApiProxy[] = [];
  let endpoint: string;
  let peerName: string;
  /** The API port both "nodes" serve on, and the one apid dials other nodes on. */
  let apiPort = 0;
  let maintenance = false;
  const seen: Seen[] = [];
  /** Set by a test: the fake machined does not read until this resolves. */
  let gate: Promise<void> | undefined;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-apid-bidi-'));
    process.env.BRONZE_RUN_DIR = path.join(dir, 'run');
    const socket = path.join(dir, 'run', 'machined', 'machined.sock');
    fs.mkdirSync(path.dirname(socket), { recursive: true });

    machined = new grpc.Server();
    machined.addService(serviceDefinition('machine.MachineService'), {
      UpgradeStream: (call: grpc.ServerDuplexStream<UploadMsg, Omit<Progress, 'metadata'>>) => {
        const hash = crypto.createHash('sha256');
        let resolveDone!: () => void;
        const s: Seen = { image: '', size: 0, bytes: 0, sha256: '', roles: call.metadata.get(ROLES_METADATA).join(','), cancelled: false, done: new Promise((r) => (resolveDone = r)) };
        seen.push(s);
        // grpc-js emits 'cancelled' whenever the stream closes: only before the end is it one.
        let over = false;
        call.on('cancelled', () => {
          if (!over) s.cancelled = true;
          resolveDone();
        });
        let first = true;
        let nextReport = 0;
        const read = () => {
          call.on('data', (m: UploadMsg) => {
            if (first) {
              first = false;
              s.image = m.request?.image ?? '';
              s.size = Number(m.size ?? 0);
              if (s.image === 'fail') {
                over = true;
                call.emit('error', { code: grpc.status.FAILED_PRECONDITION, details: 'the image is not signed' });
                resolveDone();
              }
              return;
            }
            hash.update(m.chunk!);
            s.bytes += m.chunk!.length;
            if (s.bytes >= nextReport) {
              nextReport += 1 << 20;
              call.write({ stage: 'receive', message: '', done: String(s.bytes), total: String(s.size) });
            }
          });
          // A cancel ends the request side too, shortly before 'cancelled': answer only a
          // whole upload (as machined checks the announced size).
          call.on('end', () =>
            setImmediate(() => {
              if (call.cancelled || s.bytes !== s.size) return;
              over = true;
              s.sha256 = hash.digest('hex');
              call.write({ stage: 'reboot', message: s.sha256, done: String(s.bytes), total: String(s.size) });
              call.end();
              resolveDone();
            }),
          );
        };
        if (gate) {
          call.pause();
          void gate.then(() => {
            read();
            call.resume();
          });
        } else read();
      },
    });
    await bind(machined, `unix:${socket}`);

    const proxy = (name: string) => {
      const p = new ApiProxy({
        self: new SelfIdentity(),
        get peerPort() {
          return apiPort;
        },
        peerCredentials: () => grpc.credentials.createInsecure(),
        log: quiet,
        authenticate: () => ['os:admin'],
        maintenance: () => name === 'apid' && maintenance,
      });
      proxies.push(p);
      const server = new grpc.Server();
      for (const s of p.services()) server.addService(s.definition, s.implementation);
      return server;
    };
    apid = proxy('apid');
    apiPort = await bind(apid, '127.0.0.1:0');
    endpoint = `127.0.0.1:${apiPort}`;
    // "another node": a second apid on another loopback address and the same port, relaying to
    // the same machined.
    peer = proxy('peer');
    await bind(peer, `127.0.0.2:${apiPort}`);
    peerName = '127.0.0.2';
  });

  afterAll(async () => {
    for (const p of proxies) p.close();
    for (const s of [apid, peer, machined]) s?.forceShutdown();
    delete process.env.BRONZE_RUN_DIR;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const client = () => new (serviceClient('machine.MachineService'))(endpoint, grpc.credentials.createInsecure()) as unknown as MachineClient;

  function route(key: 'node' | 'nodes', ...values: string[]): grpc.Metadata {
    const md = new grpc.Metadata();
    for (const v of values) md.add(key, v);
    return md;
  }

  /** Uploads `data` in `chunk`-byte messages, waiting for 'drain' whenever write() says so. */
  async function upload(call: Duplex, data: Buffer, chunk: number, image = ''): Promise<{ progress: Progress[] }> {
    const progress: Progress[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      call.on('data', (m: Progress) => progress.push(m));
      call.on('error', reject);
      call.on('end', resolve);
    });
    call.write({ request: { image }, size: data.length });
    for (let off = 0; off < data.length; off += chunk) {
      if (!call.write({ chunk: data.subarray(off, off + chunk) })) await new Promise((r) => call.once('drain', r));
    }
    call.end();
    await ended;
    return { progress };
  }

  it('relays a multi-MiB upload to the local machined intact, and its progress unstamped', async () => {
    const data = crypto.randomBytes(12 << 20);
    const c = client();
    const { progress } = await upload(c.UpgradeStream(), data, 1 << 20);
    const s = seen.at(-1)!;
    expect(s).toMatchObject({ size: data.length, bytes: data.length, roles: 'os:admin', cancelled: false });
    expect(s.sha256).toBe(crypto.createHash('sha256').update(data).digest('hex'));
    expect(progress.at(-1)).toMatchObject({ stage: 'reboot', message: s.sha256, done: String(data.length), total: String(data.length) });
    expect(progress.length).toBeGreaterThan(5);
    expect(progress.every((p) => !p.metadata)).toBe(true);
    c.close();
  });

  it('routes `node` to another node through its apid, stamping each progress message with it', async () => {
    const data = crypto.randomBytes(5 << 20);
    const c = client();
    const { progress } = await upload(c.UpgradeStream(route('node', peerName)), data, 1 << 20);
    expect(seen.at(-1)!.sha256).toBe(crypto.createHash('sha256').update(data).digest('hex'));
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.every((p) => p.metadata?.hostname === peerName)).toBe(true);
    // `nodes` naming exactly one node is the same as `node`
    const again = await upload(c.UpgradeStream(route('nodes', peerName)), Buffer.from('tiny'), 1 << 20);
    expect(again.progress.at(-1)).toMatchObject({ metadata: { hostname: peerName }, stage: 'reboot' });
    c.close();
  });

  it('never fans out: `nodes` with two nodes is INVALID_ARGUMENT naming them', async () => {
    const c = client();
    const call = c.UpgradeStream(route('nodes', 'a', 'b'));
    const err = await new Promise<grpc.ServiceError>((resolve) => call.on('error', resolve));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toBe('/machine.MachineService/UpgradeStream streams to one node at a time, but "nodes" names 2 (a, b): target one node with "node"');
    c.close();
  });

  it('is refused in maintenance mode', async () => {
    maintenance = true;
    try {
      const c = client();
      const err = await new Promise<grpc.ServiceError>((resolve) => c.UpgradeStream().on('error', resolve));
      expect(err.code).toBe(grpc.status.PERMISSION_DENIED);
      expect(err.details).toMatch(/^\/machine.MachineService\/UpgradeStream requires os:admin, and in maintenance mode every caller is os:reader/);
      c.close();
    } finally {
      maintenance = false;
    }
  });

  it('paces the upload by the far end: while machined does not read, the client cannot write it all', async () => {
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    try {
      const data = crypto.randomBytes(64 << 20);
      const chunk = 256 << 10;
      const c = client();
      const call = c.UpgradeStream();
      const progress: Progress[] = [];
      const ended = new Promise<void>((resolve, reject) => {
        call.on('data', (m: Progress) => progress.push(m));
        call.on('error', reject);
        call.on('end', resolve);
      });
      call.write({ request: { image: '' }, size: data.length });
      let off = 0;
      let stalled = false;
      for (; off < data.length; off += chunk) {
        if (!call.write({ chunk: data.subarray(off, off + chunk) })) {
          const drained = await Promise.race([new Promise((r) => call.once('drain', () => r(true))), new Promise((r) => setTimeout(() => r(false), 1000))]);
          if (!drained) {
            stalled = true;
            break;
          }
        }
      }
      // Stalled well before the end: neither apid nor the sockets soaked it all up.
      expect(stalled).toBe(true);
      expect(off).toBeLessThan(data.length / 2);
      open();
      await new Promise((r) => call.once('drain', r));
      for (off += chunk; off < data.length; off += chunk) {
        if (!call.write({ chunk: data.subarray(off, off + chunk) })) await new Promise((r) => call.once('drain', r));
      }
      call.end();
      await ended;
      expect(seen.at(-1)!.sha256).toBe(crypto.createHash('sha256').update(data).digest('hex'));
      c.close();
    } finally {
      gate = undefined;
    }
  });

  it('passes machined\'s error to the client (named by node when routed), and the client\'s cancel to machined', async () => {
    const c = client();
    const call = c.UpgradeStream(route('node', peerName));
    call.write({ request: { image: 'fail' } });
    const err = await new Promise<grpc.ServiceError>((resolve) => call.on('error', resolve));
    expect(err.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(err.details).toBe(`${peerName}: the image is not signed`);

    const local = c.UpgradeStream();
    local.on('error', () => {});
    local.write({ request: { image: '' }, size: 10 << 20 });
    local.write({ chunk: Buffer.alloc(1 << 20) });
    const deadline = Date.now() + 5000;
    while (seen.at(-1)!.bytes === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const s = seen.at(-1)!;
    expect(s.bytes).toBe(1 << 20);
    local.cancel();
    await s.done;
    expect(s.cancelled).toBe(true);
    c.close();
  });
});
