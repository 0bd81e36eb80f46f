// The networkd daemon itself (the bundled binary, role networkd) inside a network namespace: it serves
// health on its socket, applies a configuration file (BRONZE_NETWORKD_MANAGE=1 allows it to
// change links, as only a node otherwise does), writes resolv.conf and hosts, and stops on
// SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthChecker } from '../../../src/daemon/health-client.ts';
import { bundledBinary } from '../../lib/bundle.ts';
import { Netns, requireTools, vethPair } from './netns.ts';

async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (${String(last)})` : ''}`);
}

describe('networkd daemon in a network namespace', () => {
  let ns: Netns;
  let dir: string;
  let proc: ChildProcess;
  const output: string[] = [];

  beforeAll(() => {
    // Bundling takes a few seconds the first time in this process.
    requireTools('ip');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-networkd-'));
    ns = new Netns('daemon');
    vethPair(ns, 've0', ns, 've1');
    const config = {
      hostname: 'daemon-test.example.org',
      nameservers: ['10.77.0.53'],
      interfaces: [{ interface: 've0', mtu: 1480, addresses: ['10.77.0.2/24'], routes: [{ network: '0.0.0.0/0', gateway: '10.77.0.1' }] }],
      extraHostEntries: [{ ip: '10.77.0.9', aliases: ['db'] }],
    };
    fs.writeFileSync(path.join(dir, 'network.json'), JSON.stringify(config));
    const node = fs.existsSync('node_modules/.bin/node') ? path.resolve('node_modules/.bin/node') : process.execPath;
    // The bundled binary: tsx cannot load the .proto files the daemon server imports as text.
    proc = spawn('ip', ['netns', 'exec', ns.name, node, bundledBinary(), 'networkd'], {
      env: {
        ...process.env,
        BRONZE_RUN_DIR: path.join(dir, 'run'),
        BRONZE_NATIVE_DIR: path.join(dir, 'native'),
        BRONZE_NETWORKD_MANAGE: '1',
        BRONZE_NETWORKD_CONFIG: path.join(dir, 'network.json'),
        BRONZE_NETWORKD_ETC_DIR: path.join(dir, 'etc'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.on('data', (d: Buffer) => output.push(d.toString()));
    proc.stderr!.on('data', (d: Buffer) => output.push(d.toString()));
  }, 60_000);

  afterAll(() => {
    if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    Netns.deleteAll();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves health, applies the configuration and writes resolv.conf and hosts', async () => {
    const health = healthChecker(path.join(dir, 'run', 'networkd', 'networkd.sock'));
    try {
      await until('health SERVING', async () => (await health.check(), true), 20_000);
    } finally {
      health.close();
    }
    await until('address 10.77.0.2/24 on ve0', () => (ns.ipJson('addr', 'show', 'dev', 've0')[0].addr_info as any[]).some((a) => a.local === '10.77.0.2'), 10_000).catch((err) => {
      throw new Error(`${(err as Error).message}\n${output.join('')}`);
    });
    const ve0 = ns.ipJson('link', 'show', 've0')[0];
    expect(ve0.mtu).toBe(1480);
    expect(ve0.flags).toContain('UP');
    expect(ns.ipJson('link', 'show', 'lo')[0].flags).toContain('UP');
    await until('default route', () => ns.ipJson('route', 'show').some((r: any) => r.dst === 'default' && r.gateway === '10.77.0.1'), 5000);
    const resolv = await until('resolv.conf', () => fs.readFileSync(path.join(dir, 'etc', 'resolv.conf'), 'utf8'), 5000);
    expect(resolv).toContain('nameserver 10.77.0.53\nsearch example.org\n');
    const hosts = fs.readFileSync(path.join(dir, 'etc', 'hosts'), 'utf8');
    expect(hosts).toContain('10.77.0.2\tdaemon-test.example.org daemon-test\n');
    expect(hosts).toContain('10.77.0.9\tdb\n');
    expect((fs.statSync(path.join(dir, 'etc', 'hosts')).mode & 0o777).toString(8)).toBe('644');
  }, 40_000);

  it('stops on SIGTERM with status 0', async () => {
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 10_000);
});
