import { silentLogger } from '../lib/log.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceClient } from '../contract/protos.ts';
import { healthChecker } from './health-client.ts';
import { serveDaemon, type DaemonServer } from './serve.ts';

const quiet = silentLogger;

describe('daemon server over a real unix socket', () => {
  let dir: string;
  let d: DaemonServer;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-serve-'));
    process.env.BRONZE_RUN_DIR = dir;
    d = await serveDaemon('testd', quiet);
  });
  afterAll(async () => {
    await d.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('listens on <run>/<name>/<name>.sock', () => {
    expect(d.socket).toBe(path.join(dir, 'testd', 'testd.sock'));
    expect(fs.statSync(d.socket).isSocket()).toBe(true);
  });

  it('answers health checks, and reports NOT_SERVING when told', async () => {
    const h = healthChecker(d.socket);
    await expect(h.check()).resolves.toBeUndefined();
    d.setStatus('NOT_SERVING');
    await expect(h.check()).rejects.toThrow(/NOT_SERVING/);
    d.setStatus('SERVING');
    h.close();
  });

  it('fails the health check of a socket nobody serves', async () => {
    const h = healthChecker(path.join(dir, 'nobody.sock'), 500);
    // Said plainly (issue 17: "connect ENOENT ... Resolution note: ").
    await expect(h.check()).rejects.toThrow(new RegExp(`^health check: nothing listens on ${path.join(dir, 'nobody.sock')}$`));
    h.close();
  });

  it('serves machine.MachineService/Version in the Talos envelope', async () => {
    const Machine = serviceClient('machine.MachineService');
    const c = new Machine(`unix:${d.socket}`, grpc.credentials.createInsecure()) as unknown as {
      Version: (req: object, cb: (e: Error | null, r: { messages: Array<{ metadata: { hostname: string }; version: { tag: string; os: string } }> }) => void) => void;
      close: () => void;
    };
    const reply = await new Promise<Parameters<Parameters<typeof c.Version>[1]>[1]>((resolve, reject) => c.Version({}, (e, r) => (e ? reject(e) : resolve(r))));
    expect(reply.messages).toHaveLength(1);
    expect(reply.messages[0]!.metadata.hostname).toBe(os.hostname());
    expect(reply.messages[0]!.version.os).toBe('linux');
    expect(reply.messages[0]!.version.tag).toMatch(/^(dev|v\d)/);
    c.close();
  });
});
