import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { firstServicesAtFullPriority, type EarlyChildren } from '../machined/early.ts';
import { setNice } from './nice.ts';

/** The nice value of every thread of `pid` (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNices(pid: number): number[] {
  return fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The fields after the command name, which is in parentheses and may hold spaces.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(rest[16]);
  });
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** A Node child with a few threads of its own (V8's and libuv's), started at nice 0. */
async function threadedChild(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', 'require("node:fs").readFile(__filename, () => {}); setInterval(() => {}, 1000); process.stdout.write("up\\n")', '--'], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  return child;
}

const root = process.getuid?.() === 0;

describe('setNice', () => {
  it('sets every thread of a process, not only its main thread', async () => {
    const child = await threadedChild();
    expect(threadNices(child.pid!).length).toBeGreaterThan(1);
    setNice(child.pid!, 6);
    expect(new Set(threadNices(child.pid!))).toEqual(new Set([6]));
    expect(os.getPriority(child.pid!)).toBe(6);
  });

  it('a process that has gone is no error', () => {
    expect(() => setNice(2 ** 22 + 12345, 5)).not.toThrow();
  });

  it.runIf(root)('firstServicesAtFullPriority: the first services, started at a lower priority, run at 0 again', async () => {
    const a = await threadedChild();
    const b = await threadedChild();
    setNice(a.pid!, 10);
    setNice(b.pid!, 10);
    const early = new Map([['apid', { child: a }], ['networkd', { child: b }]]) as unknown as EarlyChildren;
    firstServicesAtFullPriority(early);
    expect(new Set([...threadNices(a.pid!), ...threadNices(b.pid!)])).toEqual(new Set([0]));
    expect(() => firstServicesAtFullPriority(undefined)).not.toThrow();
  });
});
