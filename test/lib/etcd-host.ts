// A real etcd (Debian's etcd-server) on this host, started with the command line Bronze gives
// it (src/machined/etcd/args.ts) and real mutual TLS from a fresh etcd CA: for tests of what
// etcd does with those arguments (compaction, defragment, where it listens).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newCA, type CertAndKey } from '../../src/pki/ca.ts';
import { issuePeerCert } from '../../src/pki/certs.ts';
import { ETCD_CLIENT_PORT, ETCD_METRICS_PORT, etcdArgs, peerURLs } from '../../src/machined/etcd/args.ts';
import { hostPort, type EtcdAddressPlan } from '../../src/machined/etcd/addresses.ts';
import { EtcdClient, type EtcdTls } from '../../src/etcd/client.ts';

export const ETCD_BIN = '/usr/bin/etcd';
export const haveEtcd = fs.existsSync(ETCD_BIN);

export class HostEtcd {
  readonly dir: string;
  proc: ChildProcess | undefined;
  readonly output: string[] = [];
  tls!: EtcdTls;
  args: string[] = [];

  constructor(
    readonly name: string,
    readonly plan: EtcdAddressPlan,
    /** Where metrics and /health are served, and where the tests' client calls. */
    readonly host: string,
    readonly extraArgs: Record<string, string> = {},
  ) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), `bronze-etcd-${name}-`));
  }

  get endpoint(): string {
    return hostPort(this.host, ETCD_CLIENT_PORT);
  }

  client(timeoutMs = 10_000): EtcdClient {
    return new EtcdClient([this.endpoint], this.tls, { timeoutMs });
  }

  /** Starts a new one-member cluster and waits until it is healthy. */
  async start(ca?: CertAndKey): Promise<this> {
    const etcdCA = ca ?? (await newCA({ commonName: 'etcd', validityDays: 1 }));
    const cert = await issuePeerCert(etcdCA, { commonName: this.name, ipAddresses: [...new Set([...this.plan.advertised, this.host, '127.0.0.1'])], ttlMs: 3600_000 });
    const pkiDir = path.join(this.dir, 'pki');
    fs.mkdirSync(pkiDir, { mode: 0o700 });
    fs.writeFileSync(path.join(pkiDir, 'ca.crt'), etcdCA.crt);
    fs.writeFileSync(path.join(pkiDir, 'peer.crt'), cert.crt);
    fs.writeFileSync(path.join(pkiDir, 'peer.key'), cert.key, { mode: 0o600 });
    this.tls = { ca: etcdCA.crt, cert: cert.crt, key: cert.key };
    const initial = peerURLs(this.plan.advertised).map((u) => `${this.name}=${u}`).join(',');
    this.args = etcdArgs({
      name: this.name,
      dataDir: path.join(this.dir, 'data'),
      pkiDir,
      ...this.plan,
      metricsHost: this.host,
      cluster: { state: 'new', initial },
      extraArgs: this.extraArgs,
    });
    const p = spawn(ETCD_BIN, this.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const collect = (d: Buffer) => this.output.push(...d.toString().split('\n').filter(Boolean));
    p.stdout!.on('data', collect);
    p.stderr!.on('data', collect);
    this.proc = p;
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (p.exitCode !== null || p.signalCode !== null) throw new Error(`etcd ${this.name} exited (${p.exitCode}): ${this.output.slice(-5).join(' | ')}`);
      try {
        const res = await fetch(`http://${hostPort(this.host, ETCD_METRICS_PORT)}/health`, { signal: AbortSignal.timeout(2000) });
        const body = (await res.json()) as { health?: string };
        if (body.health === 'true') return this;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline) throw new Error(`etcd ${this.name} not healthy after 30 s: ${this.output.slice(-5).join(' | ')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** A gauge or counter of etcd's /metrics (undefined when etcd does not export it). */
  async metric(name: string): Promise<number | undefined> {
    const res = await fetch(`http://${hostPort(this.host, ETCD_METRICS_PORT)}/metrics`, { signal: AbortSignal.timeout(5000) });
    const line = (await res.text()).split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.slice(name.length + 1));
  }

  async stop(): Promise<void> {
    const p = this.proc;
    if (p && p.exitCode === null && p.signalCode === null) {
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
