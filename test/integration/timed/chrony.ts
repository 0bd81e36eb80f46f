// A real NTP server for timed's tests: Debian's chronyd in a network namespace of its own,
// reached from the test process over a veth pair (10.251.x.y/30, host side .1, chronyd .2).
// chronyd runs with -x (never touches the clock), `local stratum 8` (serves its own clock,
// which is the host's), and every file in a temporary directory.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SimulatedClock } from '../../../src/timed/clock.ts';
import { query } from '../../../src/timed/sntp.ts';

export const CHRONYD = '/usr/sbin/chronyd';

function which(cmd: string): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':').concat(['/usr/sbin', '/sbin'])) {
    const p = path.join(dir, cmd);
    if (fs.existsSync(p)) return p;
  }
  return undefined;
}

/** Throws a clear error when the test cannot run here (no chronyd, no ip, not root). */
export function requireTools(): { ip: string } {
  if (!fs.existsSync(CHRONYD)) throw new Error(`${CHRONYD} is missing: install Debian's chrony package (apt-get install chrony) to run timed's integration tests`);
  const ip = which('ip');
  if (!ip) throw new Error('the ip command is missing: install iproute2 to run timed\'s integration tests');
  if (process.getuid?.() !== 0) throw new Error('timed\'s integration tests create network namespaces and must run as root');
  return { ip };
}

export class ChronyNetns {
  readonly id = crypto.randomBytes(3).toString('hex');
  readonly netns = `bztime-${this.id}`;
  readonly hostIf = `bzt${this.id}a`;
  readonly nsIf = `bzt${this.id}b`;
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-chrony-'));
  hostAddress = '';
  serverAddress = '';
  #child: ChildProcess | undefined;
  #log = '';
  readonly #ip: string;

  constructor() {
    this.#ip = requireTools().ip;
  }

  #run(...args: string[]): string {
    return execFileSync(this.#ip, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** A /30 in 10.251.200.0-10.251.254.255 that no address on the host overlaps. */
  #pickSubnet(): string {
    const used = this.#run('-o', '-4', 'addr', 'show') + this.#run('-4', 'route', 'show', 'table', 'all');
    for (let i = 0; i < 50; i++) {
      const third = 200 + crypto.randomInt(55);
      const fourth = crypto.randomInt(64) * 4;
      const prefix = `10.251.${third}.`;
      const taken = [0, 1, 2, 3].some((d) => used.includes(`${prefix}${fourth + d}`)) || used.includes(`${prefix}0/24`);
      if (!taken) return `${prefix}${fourth}`;
    }
    throw new Error('no free /30 in 10.251.200.0/21 for the test link');
  }

  /** Creates the namespace and the link, and starts chronyd. */
  async setUp(): Promise<void> {
    const base = this.#pickSubnet();
    const [a, b, c, d] = base.split('.').map(Number) as [number, number, number, number];
    this.hostAddress = `${a}.${b}.${c}.${d + 1}`;
    this.serverAddress = `${a}.${b}.${c}.${d + 2}`;
    this.#run('netns', 'add', this.netns);
    this.#run('link', 'add', this.hostIf, 'type', 'veth', 'peer', 'name', this.nsIf);
    this.#run('link', 'set', this.nsIf, 'netns', this.netns);
    this.#run('addr', 'add', `${this.hostAddress}/30`, 'dev', this.hostIf);
    this.#run('link', 'set', this.hostIf, 'up');
    this.#run('-n', this.netns, 'addr', 'add', `${this.serverAddress}/30`, 'dev', this.nsIf);
    this.#run('-n', this.netns, 'link', 'set', this.nsIf, 'up');
    this.#run('-n', this.netns, 'link', 'set', 'lo', 'up');
    fs.writeFileSync(
      path.join(this.dir, 'chrony.conf'),
      [
        'allow all',
        'local stratum 8',
        'port 123',
        `bindaddress ${this.serverAddress}`,
        'cmdport 0',
        'bindcmdaddress /', // no command socket (the host's chronyd may own the default one)
        `pidfile ${path.join(this.dir, 'chronyd.pid')}`,
        `driftfile ${path.join(this.dir, 'drift')}`,
        '',
      ].join('\n'),
    );
    await this.start();
  }

  get running(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  get log(): string {
    return this.#log;
  }

  /** Starts chronyd in the namespace and waits until it answers. */
  async start(): Promise<void> {
    if (this.running) return;
    // `ip netns exec` enters the namespace and execs chronyd: the child's pid is chronyd's.
    const child = spawn(this.#ip, ['netns', 'exec', this.netns, CHRONYD, '-f', path.join(this.dir, 'chrony.conf'), '-x', '-d', '-u', 'root'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#child = child;
    child.stdout!.on('data', (d: Buffer) => (this.#log += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (this.#log += d.toString()));
    const deadline = performance.now() + 8000;
    const clock = new SimulatedClock();
    let last = '';
    for (;;) {
      if (!this.running) throw new Error(`chronyd exited at start (code ${child.exitCode}, signal ${child.signalCode}):\n${this.#log}`);
      try {
        await query(this.serverAddress, 123, clock, { timeoutMs: 200 });
        return;
      } catch (err) {
        last = (err as Error).message;
      }
      if (performance.now() > deadline) throw new Error(`chronyd did not answer within 8 s (${last}):\n${this.#log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Stops chronyd and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (!child || !this.running) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }

  /** Removes everything; safe to call after a failed or partial setUp. */
  async tearDown(): Promise<void> {
    await this.stop().catch(() => undefined);
    for (const args of [['link', 'del', this.hostIf], ['netns', 'del', this.netns]]) {
      try {
        this.#run(...args);
      } catch {
        // not created, or already gone with the namespace
      }
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
