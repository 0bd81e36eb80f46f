// Bronze "nodes" as real processes on this host: machined in host mode (not PID 1) supervising
// a subset of the daemons, each node with its own run and secrets directories and its own
// loopback address (127.0.0.x) for apid and trustd. Everything is the real code: real
// processes, real unix sockets, real mTLS.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundledBinary } from './bundle.ts';

export interface NodeOptions {
  name: string;
  address: string;
  apiPort: number;
  trustdPort?: number;
  /** Omitted: the node boots into maintenance mode. */
  config?: string;
  services: string[];
  env?: Record<string, string>;
  /**
   * A single executable of the node's binary to run machined with (e.g. _out/build/amd64/bronze):
   * its roles compile from their code caches under the V8 flags a node runs them with. Omitted:
   * the role bundles on this Node.
   */
  binary?: string;
}

export class HostNode {
  readonly dir: string;
  proc: ChildProcess | undefined;
  readonly output: string[] = [];

  constructor(readonly o: NodeOptions) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), `bronze-${o.name}-`));
  }

  get endpoint(): string {
    return `${this.o.address}:${this.o.apiPort}`;
  }

  start(): this {
    const configFile = path.join(this.dir, 'config.yaml');
    if (this.o.config !== undefined) fs.writeFileSync(configFile, this.o.config);
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      BRONZE_RUN_DIR: path.join(this.dir, 'run'),
      BRONZE_SECRETS_DIR: path.join(this.dir, 'secrets'),
      BRONZE_NATIVE_DIR: path.join(this.dir, 'native'),
      ...(this.o.config !== undefined ? { BRONZE_CONFIG_FILE: configFile } : {}),
      BRONZE_STATE_DIR: path.join(this.dir, 'state'),
      BRONZE_SERVICES: this.o.services.join(','),
      BRONZE_APID_LISTEN: this.endpoint,
      BRONZE_APID_PEER_PORT: String(this.o.apiPort),
      ...(this.o.trustdPort ? { BRONZE_TRUSTD_LISTEN: `${this.o.address}:${this.o.trustdPort}`, BRONZE_TRUSTD_PORT: String(this.o.trustdPort) } : {}),
      ...this.o.env,
    };
    const [command, args] = this.o.binary ? [this.o.binary, ['machined']] : [process.execPath, [bundledBinary(), 'machined']];
    const p = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const collect = (d: Buffer) => this.output.push(...d.toString().split('\n').filter(Boolean));
    p.stdout!.on('data', collect);
    p.stderr!.on('data', collect);
    this.proc = p;
    return this;
  }

  async waitFor(re: RegExp, timeoutMs = 30_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const line = this.output.find((l) => re.test(l));
      if (line) return line;
      if (this.proc?.exitCode !== null && this.proc?.exitCode !== undefined) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${this.o.name}: no output line matched ${re} within ${timeoutMs} ms\n${this.output.slice(-30).join('\n')}`);
  }

  /** Orderly stop (machined stops its services), then the directory goes. */
  async stop(): Promise<void> {
    const p = this.proc;
    if (p && p.exitCode === null) {
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (p.exitCode === null) p.kill('SIGKILL');
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
