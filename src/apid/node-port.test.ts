// `node` metadata names a node, never a port (issue 50): through the real ApiProxy served on
// loopback, an os:reader's call naming `host:port` is refused with INVALID_ARGUMENT before
// any connection is made (TCP listeners on the ports it names count the connections they get),
// while a call naming the host reaches the node's API port. A node named like a grpc-js scheme
// (`unix`, which grpc-js would take as a socket path) is a host name, never a socket. Authentication is stubbed (os:reader): the
// TLS side is the integration tests' business.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../lib/log.ts';
import { ApiProxy } from './proxy.ts';
import { SelfIdentity } from './router.ts';

const raw = (b: Buffer) => b;

/** A TCP (or abstract unix) listener that counts the connections it is offered and holds them. */
class Tarpit {
  connections = 0;
  private readonly sockets = new Set<net.Socket>();
  readonly server = net.createServer((s) => {
    this.connections++;
    this.sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => this.sockets.delete(s));
  });
  /** A TCP port and address, or a unix socket path. */
  listen(...args: [number, string] | [string]): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      const done = () => resolve((this.server.address() as net.AddressInfo | null)?.port ?? 0);
      if (args.length === 1) this.server.listen(args[0], done);
      else this.server.listen(args[0], args[1], done);
    });
  }
  close(): void {
    for (const s of this.sockets) s.destroy();
    this.server.close();
  }
}

describe('apid dials a named node on the API port only', () => {
  const proxies: ApiProxy[] = [];
  const servers: grpc.Server[] = [];
  const tarpits: Tarpit[] = [];
  let apiPort = 0;
  let otherPort = 0;
  let endpoint = '';
  let maintenanceEndpoint = '';
  /** Listeners on the API port and on another port of a second loopback address. */
  let node: Tarpit;
  let other: Tarpit;

  async function serve(maintenance: boolean, address: string): Promise<number> {
    const p = new ApiProxy({
      self: new SelfIdentity(),
      get peerPort() {
        return apiPort;
      },
      peerCredentials: () => grpc.credentials.createInsecure(),
      log: silentLogger,
      authenticate: () => ['os:reader'],
      maintenance: () => maintenance,
      fanoutTimeoutMs: 2000,
    });
    proxies.push(p);
    const server = new grpc.Server();
    servers.push(server);
    for (const s of p.services()) server.addService(s.definition, s.implementation);
    return new Promise((resolve, reject) => server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (e, port) => (e ? reject(e) : resolve(port))));
  }

  beforeAll(async () => {
    apiPort = await serve(false, '127.0.0.1:0');
    endpoint = `127.0.0.1:${apiPort}`;
    maintenanceEndpoint = `127.0.0.1:${await serve(true, '127.0.0.1:0')}`;
    // "Another node" on 127.0.0.3: its API port, and another port an attacker would probe.
    tarpits.push((node = new Tarpit()), (other = new Tarpit()));
    await node.listen(apiPort, '127.0.0.3');
    otherPort = await other.listen(0, '127.0.0.3');
  });

  afterAll(() => {
    for (const p of proxies) p.close();
    for (const s of servers) s.forceShutdown();
    for (const t of tarpits) t.close();
  });

  function call(path: string, md: Array<[string, string]>, opts: { to?: string; ms?: number; stream?: boolean } = {}): Promise<grpc.ServiceError | null> {
    const c = new grpc.Client(opts.to ?? endpoint, grpc.credentials.createInsecure());
    const m = new grpc.Metadata();
    for (const [k, v] of md) m.add(k, v);
    const deadline = Date.now() + (opts.ms ?? 5000);
    return new Promise<grpc.ServiceError | null>((resolve) => {
      if (opts.stream) {
        const s = c.makeServerStreamRequest(path, raw, raw, Buffer.alloc(0), m, { deadline });
        s.on('data', () => {});
        s.on('error', (e: grpc.ServiceError) => resolve(e));
        s.on('end', () => resolve(null));
      } else {
        c.makeUnaryRequest(path, raw, raw, Buffer.alloc(0), m, { deadline }, (e) => resolve(e));
      }
    }).finally(() => c.close());
  }

  it('refuses `node: host:port` with INVALID_ARGUMENT naming it, and dials nothing', async () => {
    for (const value of [`127.0.0.3:${otherPort}`, `127.0.0.3:${apiPort}`, `[::1]:${otherPort}`, `localhost:${otherPort}`]) {
      const err = await call('/machine.MachineService/Version', [['node', value]]);
      expect(err, value).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: `node metadata names a node, not an address with a port: ${value}` });
    }
    // A fan-out with one such value is refused whole, before any node is dialled.
    const err = await call('/machine.MachineService/Version', [['nodes', `127.0.0.3, 127.0.0.3:${otherPort}`]]);
    expect(err).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: `node metadata names a node, not an address with a port: 127.0.0.3:${otherPort}` });
    const stream = await call('/machine.MachineService/Logs', [['nodes', `127.0.0.3:${otherPort}`]], { stream: true });
    expect(stream).toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    expect(other.connections).toBe(0);
    expect(node.connections).toBe(0);
  });

  it('refuses it in maintenance mode too (an error, not a crash)', async () => {
    const err = await call('/cosi.resource.State/Get', [['node', `127.0.0.1:${otherPort}`]], { to: maintenanceEndpoint });
    expect(err).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: `node metadata names a node, not an address with a port: 127.0.0.1:${otherPort}` });
    const both = await call('/cosi.resource.State/Get', [['node', 'a'], ['nodes', 'b']], { to: maintenanceEndpoint });
    expect(both).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: 'both "node" and "nodes" metadata given; use one' });
  });

  it('dials a node named without a port on the API port', async () => {
    const before = node.connections;
    // The tarpit never answers: the call ends at its deadline, after apid connected to it.
    const err = await call('/machine.MachineService/Version', [['node', '127.0.0.3']], { ms: 1500 });
    expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(node.connections).toBeGreaterThan(before);
    expect(other.connections).toBe(0);
  });

  it('treats a node named `unix` as a host name, never as a socket path', async () => {
    // grpc-js takes the target "unix:<port>" as the socket <port> in the working directory:
    // put one there, and see that apid never dials it.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-apid-unix-'));
    const socket = new Tarpit();
    const cwd = process.cwd();
    try {
      process.chdir(dir);
      await socket.listen(path.join(dir, String(apiPort)));
      const err = await call('/machine.MachineService/Version', [['node', 'unix']], { ms: 3000 });
      expect(socket.connections).toBe(0);
      // apid looked the name up (and found no such host) instead.
      expect(err).not.toBeNull();
      expect(err!.details).toMatch(/^unix: /);
    } finally {
      process.chdir(cwd);
      socket.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
