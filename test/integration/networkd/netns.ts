// Helpers for networkd's integration tests: network namespaces (unique names, removed in
// afterAll), the agent child process running networkd code inside one, and dnsmasq as a real
// DHCP server. Traffic stays inside the namespaces the tests create.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

/** Fails (rather than skips) with a clear message when a tool CI installs is missing. */
export function requireTools(...tools: string[]): void {
  const missing = tools.filter((t) => {
    try {
      execFileSync('sh', ['-c', `command -v ${t}`], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length > 0) {
    throw new Error(`networkd integration tests need ${missing.join(' and ')} (Debian: iproute2, dnsmasq-base) and root; not found: ${missing.join(', ')}`);
  }
  if (process.getuid?.() !== 0) throw new Error('networkd integration tests need root (network namespaces)');
}

export function sh(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export class Netns {
  static readonly all = new Set<Netns>();
  readonly name: string;

  constructor(tag: string) {
    this.name = `bz-${tag}-${process.pid}-${crypto.randomBytes(2).toString('hex')}`;
    sh('ip', ['netns', 'add', this.name]);
    Netns.all.add(this);
  }

  ip(...args: string[]): string {
    return sh('ip', ['-n', this.name, ...args]);
  }

  /** `ip -j ...` parsed. */
  ipJson<T = any>(...args: string[]): T {
    const text = sh('ip', ['-n', this.name, '-j', ...args]).trim();
    return (text ? JSON.parse(text) : []) as T;
  }

  exec(cmd: string, ...args: string[]): string {
    return sh('ip', ['netns', 'exec', this.name, cmd, ...args]);
  }

  delete(): void {
    try {
      sh('ip', ['netns', 'del', this.name]);
    } catch {
      /* already gone */
    }
    Netns.all.delete(this);
  }

  static deleteAll(): void {
    for (const ns of [...Netns.all]) ns.delete();
  }
}

/** A veth pair with one end (a) in nsA and the other (b) in nsB (the same namespace allowed). */
export function vethPair(nsA: Netns, a: string, nsB: Netns, b: string, macB?: string): void {
  sh('ip', ['link', 'add', a, 'netns', nsA.name, 'type', 'veth', 'peer', 'name', b, ...(macB ? ['address', macB] : []), 'netns', nsB.name]);
}

function nodeBinary(): string {
  const local = path.resolve('node_modules/.bin/node');
  return fs.existsSync(local) ? local : process.execPath;
}

export interface AgentEvent {
  event: string;
  [k: string]: any;
}

export class Agent {
  static readonly all = new Set<Agent>();
  readonly events: AgentEvent[] = [];
  readonly stderr: string[] = [];
  #proc: ChildProcess;
  #next = 1;
  readonly #pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  readonly #waiters = new Set<() => void>();

  constructor(readonly ns: Netns) {
    this.#proc = spawn('ip', ['netns', 'exec', ns.name, nodeBinary(), '--import', 'tsx', 'test/fixtures/networkd/agent.ts'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, UV_THREADPOOL_SIZE: '4' },
    });
    readline.createInterface({ input: this.#proc.stdout! }).on('line', (line) => this.#line(line));
    this.#proc.stderr!.on('data', (d: Buffer) => this.stderr.push(d.toString()));
    this.#proc.on('exit', (code, sig) => {
      for (const p of this.#pending.values()) p.reject(new Error(`agent exited (${code ?? sig}): ${this.stderr.join('').slice(-2000)}`));
      this.#pending.clear();
      this.#notify();
    });
    Agent.all.add(this);
  }

  #line(line: string): void {
    let msg: any;
    try {
      msg = JSON.parse(line);
    } catch {
      this.stderr.push(`stdout: ${line}\n`);
      return;
    }
    if (typeof msg.id === 'number') {
      const p = this.#pending.get(msg.id);
      this.#pending.delete(msg.id);
      if (msg.ok) p?.resolve(msg.result);
      else p?.reject(Object.assign(new Error(msg.error.message), msg.error));
      return;
    }
    this.events.push(msg);
    this.#notify();
  }

  #notify(): void {
    for (const w of [...this.#waiters]) w();
  }

  get exited(): boolean {
    return this.#proc.exitCode !== null || this.#proc.signalCode !== null;
  }

  call<T = any>(op: string, ...args: unknown[]): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      if (this.exited) return reject(new Error(`agent has exited: ${this.stderr.join('').slice(-2000)}`));
      this.#pending.set(id, { resolve, reject });
      this.#proc.stdin!.write(`${JSON.stringify({ id, op, args })}\n`);
    });
  }

  /** The first event (at or after index `from`) matching pred. */
  waitEvent(pred: (e: AgentEvent) => boolean, timeoutMs: number, from = 0, what = 'event'): Promise<AgentEvent> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const hit = this.events.slice(from).find(pred);
        if (hit) {
          done();
          resolve(hit);
        } else if (this.exited) {
          done();
          reject(new Error(`agent exited while waiting for ${what}: ${this.stderr.join('').slice(-2000)}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        const recent = this.events.slice(-25).map((e) => JSON.stringify(e).slice(0, 300));
        reject(new Error(`no ${what} within ${timeoutMs} ms; recent events:\n${recent.join('\n')}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(check);
      };
      this.#waiters.add(check);
      check();
    });
  }

  async close(): Promise<void> {
    if (!this.exited) {
      const exited = new Promise((r) => this.#proc.once('exit', r));
      await Promise.race([this.call('exit').catch(() => {}), new Promise((r) => setTimeout(r, 2000))]);
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      if (!this.exited) this.#proc.kill('SIGKILL');
    }
    Agent.all.delete(this);
  }

  static async closeAll(): Promise<void> {
    await Promise.all([...Agent.all].map((a) => a.close()));
  }
}

/** dnsmasq as a DHCP server only (--port=0) in a namespace, logging to a file. */
export class Dnsmasq {
  static readonly all = new Set<Dnsmasq>();
  #proc: ChildProcess | undefined;
  readonly log: string;

  constructor(
    readonly ns: Netns,
    readonly dir: string,
    readonly args: string[],
  ) {
    this.log = path.join(dir, 'dnsmasq.log');
  }

  start(): this {
    const out = fs.openSync(this.log, 'a');
    this.#proc = spawn(
      'ip',
      [
        'netns',
        'exec',
        this.ns.name,
        'dnsmasq',
        '--no-daemon',
        '--conf-file=/dev/null',
        '--port=0',
        '--no-ping',
        '--log-dhcp',
        '--log-facility=-',
        `--pid-file=${path.join(this.dir, 'dnsmasq.pid')}`,
        `--dhcp-leasefile=${path.join(this.dir, 'leases')}`,
        ...this.args,
      ],
      { stdio: ['ignore', out, out] },
    );
    fs.closeSync(out);
    Dnsmasq.all.add(this);
    return this;
  }

  logText(): string {
    try {
      return fs.readFileSync(this.log, 'utf8');
    } catch {
      return '';
    }
  }

  leases(): string {
    try {
      return fs.readFileSync(path.join(this.dir, 'leases'), 'utf8');
    } catch {
      return '';
    }
  }

  async waitLog(re: RegExp, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (re.test(this.logText())) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`dnsmasq log did not match ${re} within ${timeoutMs} ms:\n${this.logText().slice(-2000)}`);
  }

  async stop(): Promise<void> {
    const p = this.#proc;
    this.#proc = undefined;
    Dnsmasq.all.delete(this);
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  }

  static async stopAll(): Promise<void> {
    await Promise.all([...Dnsmasq.all].map((d) => d.stop()));
  }
}
