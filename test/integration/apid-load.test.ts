// One call must not stall apid (real processes, real mTLS): while an admin lists "/"
// recursively without a depth limit, and while a Version fans out to 500 nodes that accept a
// connection and never answer (a tarpit), apid's health check (what machined's supervisor
// polls, with its 2 s timeout) keeps answering, machined never sees it fail, and other calls
// still get through. The fan-out holds at most 32 connections at once and ends within one
// per-node deadline, with an error entry for each dead node and the live node's answer.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { serviceClient } from '../../src/contract/protos.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { healthChecker } from '../../src/daemon/health-client.ts';
import { issueClientCert } from '../../src/pki/certs.ts';
import { HostNode } from '../lib/nodes.ts';
import { freePort } from '../lib/ports.ts';

const Machine = serviceClient('machine.MachineService');
type Reply = { messages: Array<{ metadata?: { hostname?: string; error?: string; status?: { code?: number } }; version?: { tag: string } }> };
type MachineClient = grpc.Client & {
  Version: (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: Reply) => void) => void;
  List: (req: object, md?: grpc.Metadata) => grpc.ClientReadableStream<{ name: string }>;
  Logs: (req: object, md?: grpc.Metadata) => grpc.ClientReadableStream<{ metadata?: { hostname?: string; error?: string }; bytes?: Buffer }>;
};

const FANOUT_TIMEOUT_MS = 4000;

/** Polls apid's health on its unix socket as machined does (2 s timeout); records each latency. */
function watchHealth(node: HostNode) {
  const h = healthChecker(path.join(node.dir, 'run', 'apid', 'apid.sock'));
  const latencies: number[] = [];
  const failures: string[] = [];
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      const t0 = performance.now();
      try {
        await h.check();
      } catch (err) {
        failures.push((err as Error).message);
      }
      latencies.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    latencies,
    failures,
    async end() {
      stop = true;
      await loop;
      h.close();
    },
  };
}

describe('apid stays responsive under one heavy call', () => {
  let a: HostNode;
  let b: HostNode;
  let admin: grpc.ChannelCredentials;
  let client: MachineClient;

  beforeAll(async () => {
    const port = await freePort();
    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'load', endpoint: 'https://127.0.0.44:6443', secrets });
    const env = { BRONZE_APID_FANOUT_TIMEOUT_MS: String(FANOUT_TIMEOUT_MS) };
    a = new HostNode({ name: 'loada', address: '127.0.0.44', apiPort: port, config: cfg.controlplane, services: ['apid'], env }).start();
    b = new HostNode({ name: 'loadb', address: '127.0.0.45', apiPort: port, config: cfg.controlplane, services: ['apid'], env }).start();
    await Promise.all([a.waitFor(/serving the API on/, 60_000), b.waitFor(/serving the API on/, 60_000)]);
    const cert = await issueClientCert(secrets.certs.os, { commonName: 'admin', roles: ['os:admin'], ttlMs: 3600_000 });
    admin = grpc.credentials.createSsl(Buffer.from(secrets.certs.os.crt), Buffer.from(cert.key), Buffer.from(cert.crt));
    client = new Machine(a.endpoint, admin) as unknown as MachineClient;
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const version = (md = new grpc.Metadata(), timeoutMs = 20_000) =>
    new Promise<Reply>((resolve, reject) => client.Version({}, md, { deadline: Date.now() + timeoutMs }, (e, r) => (e ? reject(e) : resolve(r!))));

  it('streams a recursive List of "/" without a depth limit while health and other calls answer', async () => {
    const health = watchHealth(a);
    const s = client.List({ root: '/', recurse: true, recursion_depth: 0 });
    const t0 = performance.now();
    let count = 0;
    let firstAt = 0;
    const versionTimes: number[] = [];
    const ended = new Promise<void>((resolve) => {
      s.on('data', () => {
        if (count++ === 0) firstAt = performance.now() - t0;
      });
      s.on('error', () => resolve());
      s.on('end', () => resolve());
    });
    // For 4 s (the walk saturates this host's cores; other test files run beside it): a Version
    // through the same apid to the same machined every 500 ms.
    const until = Date.now() + 4000;
    while (Date.now() < until) {
      const v0 = performance.now();
      await version(new grpc.Metadata(), 5000);
      versionTimes.push(performance.now() - v0);
      await new Promise((r) => setTimeout(r, 500));
    }
    s.cancel();
    await ended;
    await health.end();
    expect(firstAt).toBeLessThan(2000); // it streams: the first entries come at once
    expect(count).toBeGreaterThan(5_000);
    expect(health.failures).toEqual([]);
    expect(Math.max(...health.latencies)).toBeLessThan(1000);
    expect(Math.max(...versionTimes)).toBeLessThan(2000);
    expect(a.output.filter((l) => /apid.*Health check failed/i.test(l))).toEqual([]);
  }, 60_000);

  it('holds a recursive List of "/" for a client that stops reading, without buffering it or stalling', async () => {
    const pid = Number(/\(pid (\d+)\)/.exec(await a.waitFor(/service apid: Running: Process started \(pid \d+\)/))![1]);
    const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
    const health = watchHealth(a);
    const s = client.List({ root: '/', recurse: true, recursion_depth: 0 });
    let count = 0;
    const ended = new Promise<void>((resolve) => {
      s.on('error', () => resolve());
      s.on('end', () => resolve());
    });
    await new Promise<void>((resolve) =>
      s.on('data', () => {
        if (++count === 2000) {
          s.pause();
          resolve();
        }
      }),
    );
    const before = rss();
    await new Promise((r) => setTimeout(r, 6000)); // the client reads nothing for 6 s
    const after = rss();
    const v0 = performance.now();
    await version(new grpc.Metadata(), 5000);
    const versionMs = performance.now() - v0;
    s.cancel();
    s.resume();
    await ended;
    await health.end();
    expect(after - before).toBeLessThan(16 * 1024 * 1024); // without backpressure: ~40 MiB here
    expect(versionMs).toBeLessThan(2000);
    expect(health.failures).toEqual([]);
    expect(Math.max(...health.latencies)).toBeLessThan(1000);
  }, 60_000);

  it('fans a Version and a Logs stream out to 500 silent nodes and a live one: one deadline, at most 32 connections, health answering', async () => {
    const sockets = new Set<net.Socket>();
    let maxOpen = 0;
    let accepted = 0;
    const servers: net.Server[] = [];
    const targets: string[] = [b.o.address]; // the live node first: it gets a slot at once
    // 500 addresses (127.0.1.1-250, 127.0.2.1-250), each with a tarpit on the API port.
    for (let i = 0; i < 500; i++) {
      const address = `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`;
      const srv = net.createServer((sock) => {
        accepted++;
        sockets.add(sock);
        maxOpen = Math.max(maxOpen, sockets.size);
        sock.on('close', () => sockets.delete(sock));
        sock.on('error', () => {});
        sock.resume(); // read (and drop) the ClientHello, so that apid's close is seen
      });
      await new Promise<void>((resolve) => srv.listen(a.o.apiPort, address, () => resolve()));
      servers.push(srv);
      targets.push(address);
    }
    try {
      const health = watchHealth(a);
      const md = new grpc.Metadata();
      for (const t of targets) md.add('nodes', t);
      const t0 = performance.now();
      const r = await version(md, 60_000);
      const took = performance.now() - t0;
      await health.end();

      expect(r.messages).toHaveLength(501);
      const ok = r.messages.filter((m) => !m.metadata?.error);
      expect(ok.map((m) => m.metadata?.hostname)).toEqual([b.o.address]);
      const failed = r.messages.filter((m) => m.metadata?.error);
      expect(failed).toHaveLength(500);
      expect(failed.every((m) => m.metadata?.status?.code === grpc.status.DEADLINE_EXCEEDED)).toBe(true);
      expect(took).toBeGreaterThan(FANOUT_TIMEOUT_MS - 500);
      expect(took).toBeLessThan(FANOUT_TIMEOUT_MS + 3000); // one deadline, not 500/32 of them
      expect(maxOpen).toBeLessThanOrEqual(32);
      expect(accepted).toBeGreaterThan(0);
      expect(health.failures).toEqual([]);
      expect(Math.max(...health.latencies)).toBeLessThan(1000);
      expect(a.output.filter((l) => /apid.*Health check failed/i.test(l))).toEqual([]);
      // apid lets go of the dead nodes: their connections close.
      const deadline = Date.now() + 10_000;
      while (sockets.size > 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 200));
      expect(sockets.size).toBe(0);
      // and it still answers
      expect((await version()).messages).toHaveLength(1);

      // A server stream fans out the same way: the live node's lines, an error entry per
      // silent node, all within one deadline and 32 connections.
      maxOpen = 0;
      const logs: Array<{ metadata?: { hostname?: string; error?: string }; bytes?: Buffer }> = [];
      const s0 = performance.now();
      await new Promise<void>((resolve, reject) => {
        const st = client.Logs({ namespace: 'system', id: 'machined', tail_lines: 2 }, md);
        st.on('data', (m) => logs.push(m));
        st.on('error', reject);
        st.on('end', () => resolve());
      });
      const streamTook = performance.now() - s0;
      expect(logs.filter((m) => !m.metadata?.error && m.metadata?.hostname === b.o.address)).toHaveLength(2);
      expect(logs.filter((m) => m.metadata?.error)).toHaveLength(500);
      expect(streamTook).toBeLessThan(FANOUT_TIMEOUT_MS + 3000);
      expect(maxOpen).toBeLessThanOrEqual(32);
    } finally {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise((res) => s.close(res))));
    }
  }, 90_000);
});
