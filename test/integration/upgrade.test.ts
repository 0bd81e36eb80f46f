// `bronzectl upgrade --image <file>` end to end on loopback, short of a disk: the real CLI
// (bin/bronzectl.mjs, a separate process) → the real apid (the bundled binary, a separate
// process, real mTLS, the RBAC table) → machined's real API server (in this process) on its
// unix socket → a fake Lifecycle that hashes what it is given. The bytes must arrive intact,
// the progress must come back, and the reboot must be asked for once the stream has ended.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import { pack } from 'tar-stream';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { parseCmdline } from '../../src/machined/cmdline.ts';
import { NodeLifecycle } from '../../src/machined/lifecycle/lifecycle.ts';
import { initGrubenv } from '../../src/machined/lifecycle/slots.ts';
import type { NodeDisk } from '../../src/machined/volumes.ts';
import { EventBus } from '../../src/machined/api/events.ts';
import type { InstallOptions, Lifecycle, ProgressEvent, ResetOptions, UpgradeOptions } from '../../src/machined/api/lifecycle.ts';
import { startMachinedApi } from '../../src/machined/api/server.ts';
import { Supervisor } from '../../src/machined/supervisor/supervisor.ts';
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

/** machined's API with `lifecycle`, and a real apid in front of it; a client config for it. */
async function startNode(dir: string, lifecycle: Lifecycle) {
  const run = path.join(dir, 'run');
  const secrets = path.join(dir, 'secrets');
  const port = await freePort();
  const apidOutput: string[] = [];

  // apid's certificates, as machined writes them
  const ca = await newCA({ commonName: 'bronze', organization: 'bronze', validityDays: 1 });
  const server = await issueServerCert(ca, { commonName: 'apid', ipAddresses: ['127.0.0.1'], dnsNames: ['localhost'], ttlMs: 86_400_000 });
  fs.mkdirSync(path.join(secrets, 'apid'), { recursive: true });
  fs.writeFileSync(path.join(secrets, 'apid', 'ca.crt'), ca.crt);
  fs.writeFileSync(path.join(secrets, 'apid', 'server.crt'), server.crt);
  fs.writeFileSync(path.join(secrets, 'apid', 'server.key'), server.key!);

  // machined's API with the given Lifecycle, where apid looks for it
  const api = await startMachinedApi({
    supervisor: new Supervisor([]),
    log: { lines: () => [], follow: () => () => {} },
    events: new EventBus(),
    state: new MemoryState(),
    registry: new DefinitionRegistry(),
    requestSequence: () => {},
    lifecycle,
    socket: path.join(run, 'machined', 'machined.sock'),
  });

  const apid = spawn(process.execPath, [bundledBinary(), 'apid'], {
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

  const config = path.join(dir, 'config');
  await save(config, await newClientConfig({ contextName: 'it', endpoints: [`127.0.0.1:${port}`], nodes: [], ca, roles: ['os:admin'], ttlMs: 86_400_000 }));
  const close = async () => {
    if (apid.exitCode === null) {
      const exited = new Promise((r) => apid.once('exit', r));
      apid.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (apid.exitCode === null) apid.kill('SIGKILL');
    }
    await api.close();
  };
  return { config, apidOutput, close };
}

describe('bronzectl upgrade --image <file> through a real apid', () => {
  let dir: string;
  const lifecycle = new HashingLifecycle();
  let node: Awaited<ReturnType<typeof startNode>>;
  let config: string;
  let apidOutput: string[];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-upgrade-it-'));
    node = await startNode(dir, lifecycle);
    ({ config, apidOutput } = node);
  }, 120_000);

  afterAll(async () => {
    await node?.close();
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

// The real NodeLifecycle on a host "disk" (BOOT a directory, META a file, as in
// src/machined/lifecycle/slots-flow.test.ts) behind the real apid: an upload that is not an
// upgrade image must be refused as soon as its first bytes show it, not hang (issue 17: a
// 58.7 MiB ISO stalled at "upload 34-36 MiB" for good, and the node logged nothing).
describe('bronzectl upgrade --image <a large file that is not an image> through a real apid', () => {
  let dir: string;
  let boot: string;
  let meta: string;
  let node: Awaited<ReturnType<typeof startNode>>;
  const logged: string[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-upgrade-refuse-'));
    boot = path.join(dir, 'boot');
    fs.mkdirSync(path.join(boot, 'A'), { recursive: true });
    fs.writeFileSync(path.join(boot, 'A', 'vmlinuz'), 'kernel of v1');
    fs.writeFileSync(path.join(boot, 'A', 'initramfs.xz'), 'initramfs of v1');
    initGrubenv(boot, { saved_entry: 'A' });
    meta = path.join(dir, 'meta');
    fs.writeFileSync(meta, Buffer.alloc(1 << 20));
    const key = generateKeyPairSync('ed25519');
    fs.writeFileSync(path.join(dir, 'trusted.pub'), key.publicKey.export({ type: 'spki', format: 'pem' }));
    const part = (label: string, device: string) => ({ label, number: 1, name: label, device, start: 0, size: 0, uuid: '', type: '' });
    const disk = { disk: 'vda', device: '/dev/vda', uuid: 'u', partitions: { BOOT: part('BOOT', 'boot-device'), META: part('META', meta) } } as unknown as NodeDisk;
    const log = { info: (m: string) => logged.push(m), warn: (m: string) => logged.push(m), error: (m: string) => logged.push(m) };
    const lifecycle = new NodeLifecycle({
      log,
      state: new MemoryState(),
      cmdline: () => parseCmdline('bronze.slot=A'),
      volumes: () => ({ disk, mounted: [], statuses: {} }),
      configText: () => undefined,
      requestSequence: () => {},
      trustedKeyFile: path.join(dir, 'trusted.pub'),
      stageRoot: path.join(dir, 'var'),
      mountBoot: (_device, fn) => fn(boot),
    });
    await lifecycle.boot();
    node = await startNode(dir, lifecycle);
  }, 120_000);

  afterAll(async () => {
    await node?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const refused = async (file: string, why: RegExp) => {
    const before = { env: fs.readFileSync(path.join(boot, 'grub', 'grubenv')), meta: fs.readFileSync(meta) };
    const t0 = Date.now();
    const r = await bronzectl(['upgrade', '--image', file], { config: node.config, timeoutMs: 60_000 });
    const took = Date.now() - t0;
    expect(r.code, `exit ${r.code} after ${took} ms\n${r.stderr}\n${node.apidOutput.join('\n')}`).toBe(1);
    expect(r.stderr).toMatch(why);
    expect(r.stderr).toMatch(/nothing was written/);
    expect(took, 'refused on its first bytes, not after sending the whole file').toBeLessThan(20_000);
    expect(fs.readFileSync(path.join(boot, 'grub', 'grubenv'))).toEqual(before.env);
    expect(fs.readFileSync(meta)).toEqual(before.meta);
    expect(fs.existsSync(path.join(boot, 'B', 'vmlinuz'))).toBe(false);
    expect(logged.at(-1), 'the node says it too').toMatch(/^upgrade: upgrade image refused, nothing was written: /);
  };

  it('refuses 60 MiB of random bytes (not a tar archive) at once', async () => {
    const file = path.join(dir, 'random.bin');
    fs.writeFileSync(file, crypto.randomBytes(60 * MiB));
    await refused(file, /not a Bronze upgrade image: not a tar archive/);
  }, 90_000);

  it('refuses a 60 MiB tar archive whose first entry is not manifest.json at once', async () => {
    const file = path.join(dir, 'other.tar');
    const p = pack();
    const out = fs.createWriteStream(file);
    const written = new Promise<void>((res, rej) => out.on('finish', () => res()).on('error', rej));
    p.pipe(out);
    await new Promise<void>((res, rej) => p.entry({ name: 'rootfs.sqsh', mtime: new Date(0) }, crypto.randomBytes(60 * MiB), (err) => (err ? rej(err) : res())));
    p.finalize();
    await written;
    await refused(file, /its first entry is "rootfs\.sqsh", not manifest\.json/);
  }, 90_000);

  it('the node can take the next upgrade at once: the refused one left nothing busy', async () => {
    const r = await bronzectl(['upgrade', '--image', path.join(dir, 'random.bin')], { config: node.config, timeoutMs: 60_000 });
    expect(r.stderr).not.toMatch(/in progress/);
    expect(r.stderr).toMatch(/not a tar archive/);
  }, 90_000);
});
