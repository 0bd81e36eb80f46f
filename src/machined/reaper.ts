// Zombie reaping for PID 1. Orphans re-parent to machined and must be reaped, but Node's
// libuv waits for the children it spawned itself (the supervised daemons) by pid: a
// waitpid(-1) would steal their exit status. So the reaper looks for zombies in /proc whose
// parent is this process and reaps only those that are not libuv's.
import { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { reap } from '../lib/sys.ts';
import type { Logger } from '../lib/log.ts';

export interface ProcStat {
  pid: number;
  comm: string;
  state: string;
  ppid: number;
}

/** Parses /proc/<pid>/stat; the command name may itself hold spaces and parentheses. */
export function parseStat(text: string): ProcStat | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const rest = text.slice(close + 2).split(' ');
  const pid = Number(text.slice(0, open).trim());
  const ppid = Number(rest[1]);
  if (!Number.isInteger(pid) || !Number.isInteger(ppid)) return undefined;
  return { pid, comm: text.slice(open + 1, close), state: rest[0] ?? '?', ppid };
}

export function zombieChildren(parent: number, procDir = '/proc'): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of fs.readdirSync(procDir)) {
    if (!/^\d+$/.test(name)) continue;
    let text: string;
    try {
      text = fs.readFileSync(`${procDir}/${name}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const st = parseStat(text);
    if (st && st.ppid === parent && st.state === 'Z') out.push(st);
  }
  return out;
}

const spawned = new Set<number>();
let tracking = false;

/**
 * Every child this process has spawned through node:child_process (the daemons, and mkfs.xfs
 * and the like from spawn or execFile) that libuv has not yet reaped: the reaper must leave them
 * alone. Knowing only the supervised daemons was not enough: a child of machined's own work
 * that exited while the event loop was busy could be reaped by a sweep before libuv saw it,
 * and then its 'exit' never came (issue 17: a reset hung in the wipe, "reaped orphan (mkfs.xfs)").
 */
export function spawnedChildren(): () => Set<number> {
  if (!tracking) {
    tracking = true;
    const proto = ChildProcess.prototype as unknown as { spawn: (this: ChildProcess, ...args: unknown[]) => unknown };
    const original = proto.spawn;
    proto.spawn = function (this: ChildProcess, ...args: unknown[]) {
      const r = original.apply(this, args);
      const pid = this.pid;
      if (pid !== undefined) {
        spawned.add(pid);
        this.once('exit', () => spawned.delete(pid));
      }
      return r;
    };
  }
  return () => spawned;
}

export class Reaper {
  private timer: NodeJS.Timeout | undefined;
  private pending = false;
  reaped = 0;

  constructor(
    private readonly ownChildren: () => Set<number>,
    private readonly log: Logger,
    // Every zombie's death sends SIGCHLD, which sweeps; the timer only catches a sweep that
    // missed one. Each sweep reads every /proc/<pid>/stat (kernel threads too): every 5 s that
    // was a visible share of machined's CPU under QEMU/TCG (profile: parseStat, readFileUtf8).
    private readonly intervalMs = 60_000,
  ) {}

  start(): void {
    process.on('SIGCHLD', this.onSigchld);
    this.timer = setInterval(() => this.sweep(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    process.off('SIGCHLD', this.onSigchld);
    if (this.timer) clearInterval(this.timer);
  }

  private readonly onSigchld = (): void => {
    if (this.pending) return;
    this.pending = true;
    // Let libuv handle its own children first, then sweep what is left.
    setTimeout(() => {
      this.pending = false;
      this.sweep();
    }, 50);
  };

  sweep(): number {
    const own = this.ownChildren();
    let n = 0;
    for (const z of zombieChildren(process.pid)) {
      if (own.has(z.pid)) continue;
      if (reap(z.pid) === z.pid) {
        n++;
        this.log.info(`reaped orphan ${z.pid} (${z.comm})`);
      }
    }
    this.reaped += n;
    return n;
  }
}
