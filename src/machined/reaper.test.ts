import { silentLogger } from '../lib/log.ts';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { beforeAll, describe, expect, it } from 'vitest';
import { initNative } from '../lib/native.ts';
import { setChildSubreaper } from '../lib/sys.ts';
import { Reaper, spawnedChildren, parseStat, zombieChildren } from './reaper.ts';

const quiet = silentLogger;

describe('parseStat', () => {
  it('reads pid, state and ppid, even with spaces and parentheses in the name', () => {
    expect(parseStat('42 (my (odd) name) Z 1 42 42 0 -1')).toEqual({ pid: 42, comm: 'my (odd) name', state: 'Z', ppid: 1 });
  });
  it('rejects garbage', () => {
    expect(parseStat('nonsense')).toBeUndefined();
    expect(parseStat('x (a) S y')).toBeUndefined();
  });
});

describe('Reaper against real processes', () => {
  beforeAll(async () => {
    await initNative();
    // This test process stands in for PID 1: orphans of its children re-parent to it.
    setChildSubreaper();
  });

  it('reaps orphans but leaves the exit status of its own children to libuv', async () => {
    // An own child that exits with a distinctive code, after the orphans are made.
    const own = spawn(process.execPath, ['-e', 'setTimeout(() => process.exit(7), 400)']);
    const ownExit = once(own, 'exit');
    // A middle process that leaves two orphans behind, which exit soon and become zombies of ours.
    const middle = spawn(process.execPath, [
      '-e',
      `const { spawn } = require('node:child_process');
       for (let i = 0; i < 2; i++) spawn(process.execPath, ['-e', 'setTimeout(() => {}, 150)'], { detached: true, stdio: 'ignore' }).unref();
       process.exit(0);`,
    ]);
    await once(middle, 'exit');
    await new Promise((r) => setTimeout(r, 1500)); // orphans and own child have all exited by now

    const reaper = new Reaper(() => new Set(own.exitCode === null ? [own.pid!] : []), quiet);
    const zombies = zombieChildren(process.pid).map((z) => z.pid);
    expect(zombies.length).toBeGreaterThanOrEqual(2);
    const n = reaper.sweep();
    expect(n).toBeGreaterThanOrEqual(2);
    expect(zombieChildren(process.pid).filter((z) => z.pid !== own.pid)).toEqual([]);
    const [code] = await ownExit;
    expect(code).toBe(7); // libuv still saw the real exit status
  });

  it('leaves alone a child of execFile that exited while the event loop was busy (issue 17: a reset hung in mkfs.xfs)', async () => {
    const children = spawnedChildren();
    const reaper = new Reaper(() => new Set(children()), quiet);
    const done = new Promise<number | null>((resolve) => {
      const c = execFile(process.execPath, ['-e', 'process.exit(3)'], () => resolve(c.exitCode));
    });
    // Busy: the child exits and is a zombie before libuv gets to it; a sweep now must skip it.
    const until = Date.now() + 1500;
    while (Date.now() < until && zombieChildren(process.pid).length === 0);
    expect(zombieChildren(process.pid).length, 'the child is a zombie, libuv has not reaped it yet').toBeGreaterThan(0);
    expect(reaper.sweep()).toBe(0);
    expect(await done).toBe(3); // libuv saw it exit, with its status
    expect(children().size).toBe(0);
  });
});
