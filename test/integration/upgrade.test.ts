// `bronzectl upgrade --image <file>` end to end on loopback, short of a disk: the real CLI
// (bin/bronzectl.mjs, a separate process) → the real apid (the bundled binary, a separate
// process, real mTLS, the RBAC table) → machined's real API server (in this process) on its
// unix socket → a fake Lifecycle that hashes what it is given. The bytes must arrive intact,
// the progress must come back, and the reboot must be asked for once the stream has ended.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { EventBus } from '../../src/machined/api/events.ts';
import type { InstallOptions, Lifecycle, ProgressEvent, ResetOptions, UpgradeOptions } from '../../src/machined/api/lifecycle.ts';
import { type MachinedApi, startMachinedApi } from '../../src/machined/api/server.ts';
import { Supervisor } from '../../src/machined/supervisor.ts';
import { newCA } from '../../src/pki/ca.ts';
import { issueServerCert } from '../../src/pki/certs.ts';
import { DefinitionRegistry } from '../../src/contract/resources/registry.ts';
import { MemoryState } from '../../src/state/memory.ts';
import { bronzectl } from '../lib/bronzectl.ts';
import { bundledBinary } from '../lib/bundle.ts';
import { freePort } from '../lib/ports.ts';

const MiB = 1 << 20;

class HashingLifecycle implements Lifecycle {
  readonly upgrades: Array<{ o: UpgradeOptions; size: number; bytes: number; sha256: string; chunks: number }> = [];
  readonly reboots: Array<{ reason: string; actorId: string }> = [];

  async upgrade(o: UpgradeOptions, upload: AsyncIterable<Buffer> | undefined, size: number, progress: (p: ProgressEvent) => void): Promise<void> {
    const rec = { o, size, bytes: 0, sha256: '', chunks: 0 };
    this.upgrades.push(rec);
    if (!upload) throw new Error('this test sends files only');
    const hash = crypto.createHash('sha256');
    for await (const chunk of upload) {
      hash.update(chunk);
      rec.bytes += chunk.length;
      rec.chunks++;
      progress({ stage: 'receive', message: 'upload', done: rec.bytes, total: size });
    }
    rec.sha256 = hash.digest('hex');
    progress({ stage: 'verify', message: `sha256 ${rec.sha256}` });
    progress({ stage: 'write', message: 'slot B', done: size, total: size });
  }
  async install(_o: InstallOptions): Promise<void> {
    throw new Error('not in this test');
  }
  reboot(reason: string, actorId: string): void {
    this.reboots.push({ reason, actorId });
  }
  async reset(_o: ResetOptions): Promise<void> {}
  async rollback(): Promise<void> {}
}

describe('bronzectl upgrade --image <file> through a real apid', () => {
  let dir: string;
  let apid: ChildProcess;
  const apidOutput: string[] = [];
  let api: MachinedApi;
  const lifecycle = new HashingLifecycle();
  let config: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-upgrade-it-'));
    const run = path.join(dir, 'run');
    const secrets = path.join(dir, 'secrets');
    const port = await freePort();

    // apid's certificates, as machined writes them
    const ca = await newCA({ commonName: 'bronze', organization: 'bronze', validityDays: 1 });
    const server = await issueServerCert(ca, { commonName: 'apid', ipAddresses: ['127.0.0.1'], dnsNames: ['localhost'], ttlMs: 86_400_000 });
    fs.mkdirSync(path.join(secrets, 'apid'), { recursive: true });
    fs.writeFileSync(path.join(secrets, 'apid', 'ca.crt'), ca.crt);
    fs.writeFileSync(path.join(secrets, 'apid', 'server.crt'), server.crt);
    fs.writeFileSync(path.join(secrets, 'apid', 'server.key'), server.key!);

    // machined's API with the fake Lifecycle, where apid looks for it
    api = await startMachinedApi({
      supervisor: new Supervisor([]),
      log: { lines: () => [], follow: () => () => {} },
      events: new EventBus(),
      state: new MemoryState(),
      registry: new DefinitionRegistry(),
      requestSequence: () => {},
      lifecycle,
      socket: path.join(run, 'machined', 'machined.sock'),
    });

    apid = spawn(process.execPath, [bundledBinary(), 'apid'], {
      env: {
        ...process.env,
        BRONZE_RUN_DIR: run,
        BRONZE_SECRETS_DIR: secrets,
        BRONZE_NATIVE_DIR: path.join(dir, 'native'),
        BRONZE_APID_LISTEN: `127.0.0.1:${port}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (d: Buffer) => apidOutput.push(...d.toString().split('\n').filter(Boolean));
    apid.stdout!.on('data', collect);
    apid.stderr!.on('data', collect);
    const deadline = Date.now() + 60_000;
    while (!apidOutput.some((l) => /serving the API on/.test(l))) {
      if (Date.now() > deadline || apid.exitCode !== null) throw new Error(`apid did not come up:\n${apidOutput.join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }

    config = path.join(dir, 'config');
    await save(config, await newClientConfig({ contextName: 'it', endpoints: [`127.0.0.1:${port}`], nodes: [], ca, roles: ['os:admin'], ttlMs: 86_400_000 }));
  }, 120_000);

  afterAll(async () => {
    if (apid && apid.exitCode === null) {
      const exited = new Promise((r) => apid.once('exit', r));
      apid.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (apid.exitCode === null) apid.kill('SIGKILL');
    }
    await api?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('delivers a multi-MiB image intact, streams the progress back, then reboots', async () => {
    const image = crypto.randomBytes(40 * MiB + 777);
    const file = path.join(dir, 'upgrade.tar');
    fs.writeFileSync(file, image);
    const sha256 = crypto.createHash('sha256').update(image).digest('hex');

    const r = await bronzectl(['-n', '127.0.0.1', 'upgrade', '--image', file, '--preserve'], { config, timeoutMs: 120_000 });
    expect(r.code, `${r.stderr}\n${apidOutput.join('\n')}`).toBe(0);

    expect(lifecycle.upgrades).toHaveLength(1);
    const u = lifecycle.upgrades[0]!;
    expect(u).toMatchObject({ o: { image: '', preserve: true, stage: false, force: false }, size: image.length, bytes: image.length, sha256 });
    expect(u.chunks).toBe(41);

    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('upload 0.0/40.0 MiB');
    expect(lines).toContain('upload 40.0/40.0 MiB');
    expect(lines.length).toBeLessThanOrEqual(14);
    expect(lines).toContain(`verify: sha256 ${sha256}`);
    // apid stamped the progress with the node named; the CLI names the node by it
    expect(r.stdout).toMatch(/^127\.0\.0\.1: upgrade done: rebooting \(actor id [0-9a-f-]{36}\)\n$/);

    const deadline = Date.now() + 5000;
    while (lifecycle.reboots.length === 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
    expect(lifecycle.reboots).toEqual([{ reason: 'API Upgrade request', actorId: r.stdout.match(/actor id ([0-9a-f-]{36})/)![1] }]);
  }, 180_000);

  it('a missing file is named by the CLI before anything is sent', async () => {
    const before = lifecycle.upgrades.length;
    const r = await bronzectl(['upgrade', '--image', path.join(dir, 'nope.tar')], { config });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`${path.join(dir, 'nope.tar')}: no such file (give an upgrade image file, or an http:// or https:// URL)\n`);
    expect(lifecycle.upgrades.length).toBe(before);
  });
});
