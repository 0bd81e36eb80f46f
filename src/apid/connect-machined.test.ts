// ApiProxy.connectMachined (connect-machined.ts): apid starts before machined serves, and connects to machined's
// socket (one health check over it) as soon as it is there, so that the first call to the API
// does not pay for the connection. A real grpc-js server on a unix socket that appears later.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { serviceDefinition } from '../contract/protos.ts';
import { silentLogger } from '../lib/log.ts';
import { ApiProxy } from './proxy.ts';
import { SelfIdentity } from './router.ts';

function proxy(): ApiProxy {
  return new ApiProxy({ self: new SelfIdentity(() => []), peerPort: 50000, peerCredentials: () => undefined, log: silentLogger });
}

/** A machined stand-in: health checks counted. */
async function machined(socket: string): Promise<{ server: grpc.Server; checks: () => number }> {
  let checks = 0;
  const server = new grpc.Server();
  server.addService(serviceDefinition('grpc.health.v1.Health'), {
    Check: (_c: unknown, cb: grpc.sendUnaryData<unknown>) => {
      checks++;
      cb(null, { status: 'SERVING' });
    },
    Watch: () => {},
  });
  fs.mkdirSync(path.dirname(socket), { recursive: true });
  await new Promise<void>((resolve, reject) => server.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
  return { server, checks: () => checks };
}

describe('apid connects to machined before the first call', () => {
  const cleanup: Array<() => void> = [];
  afterEach(() => {
    for (const c of cleanup.splice(0)) c();
  });
  const runDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-apid-connect-'));
    const before = process.env.BRONZE_RUN_DIR;
    process.env.BRONZE_RUN_DIR = dir;
    cleanup.push(() => {
      if (before === undefined) delete process.env.BRONZE_RUN_DIR;
      else process.env.BRONZE_RUN_DIR = before;
      fs.rmSync(dir, { recursive: true, force: true });
    });
    return path.join(dir, 'machined', 'machined.sock');
  };

  it('waits for the socket, then has machined answer one health check', async () => {
    const socket = runDir();
    const p = proxy();
    cleanup.push(() => p.close());
    const connected = p.connectMachined({ everyMs: 20, forMs: 10_000 });
    await new Promise((r) => setTimeout(r, 200));
    const m = await machined(socket);
    cleanup.push(() => m.server.forceShutdown());
    expect(await connected).toBe(true);
    expect(m.checks()).toBe(1);
  });

  it('gives up after forMs when machined never comes, and stops when apid closes', async () => {
    runDir();
    const p = proxy();
    const t0 = Date.now();
    expect(await p.connectMachined({ everyMs: 20, forMs: 300 })).toBe(false);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    const waiting = p.connectMachined({ everyMs: 20, forMs: 60_000 });
    p.close();
    expect(await waiting).toBe(false);
  });

  it('keeps trying while the socket is there but nothing answers on it yet', async () => {
    const socket = runDir();
    fs.mkdirSync(path.dirname(socket), { recursive: true });
    fs.writeFileSync(socket, ''); // a file where the socket will be: connecting fails
    const p = proxy();
    cleanup.push(() => p.close());
    const connected = p.connectMachined({ everyMs: 20, forMs: 10_000 });
    await new Promise((r) => setTimeout(r, 200));
    fs.rmSync(socket);
    const m = await machined(socket);
    cleanup.push(() => m.server.forceShutdown());
    expect(await connected).toBe(true);
    expect(m.checks()).toBe(1);
  });
});
