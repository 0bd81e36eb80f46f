// The process runner of the supervisor: spawns a service's process (or takes over one started
// before the supervisor), wires its output and its exit, stops it (SIGTERM, then SIGKILL after
// a timeout), and clears up after it has exited.
//
// The supervisor never calls waitpid: libuv waits for the children it spawned and reports them
// through the ChildProcess 'exit' event.

import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { withAmbientCapabilities } from '../../lib/capabilities.ts';
import { setNice } from '../../lib/nice.ts';
import { READY_LINE, READY_STDIO, withReadyFd } from '../../lib/ready.ts';
import { captureLines } from './output.ts';
import { toError, type Run, type Service, type SupervisorHooks } from './service.ts';
import type { AdoptedProcess } from './types.ts';

const DEFAULT_STOP_TIMEOUT = 10_000;

/**
 * Starts the service's process with the spec's command, and the arguments and environment of
 * the prepare step (or the spec's), or takes over `early` instead: svc.run is set once it runs,
 * and hooks.exited hears of its end (or of a failed spawn).
 */
export function startProcess(
  svc: Service,
  prepared: { args?: string[]; env?: Record<string, string> } | undefined,
  early: AdoptedProcess | undefined,
  hooks: SupervisorHooks,
): void {
  const { command, argv0 } = svc.spec;
  const args = prepared?.args ?? svc.spec.args ?? [];
  const env = prepared?.env ?? svc.spec.env;
  const capture = (stream: Readable | null) => captureLines(stream, (raw) => hooks.line(svc, raw));
  let child: ChildProcess;
  let stdout: Readable | null;
  let stderr: Readable | null;
  let ready: Readable | null | undefined;
  if (early) {
    hooks.record(svc, 'Preparing', `Taking over ${command} (pid ${early.child.pid}), started before the supervisor`);
    ({ child, stdout, stderr, ready } = early);
    if (child.exitCode !== null || child.signalCode !== null) {
      // It ended before it could be taken over: its 'exit' has gone by, its output has not.
      capture(stdout);
      capture(stderr);
      hooks.exited(svc, { code: child.exitCode, signal: child.signalCode });
      return;
    }
  } else {
    const user = svc.spec.user;
    hooks.record(svc, 'Preparing', `Starting ${command}${user ? ` as uid ${user.uid}, gid ${user.gid}${user.capabilities?.length ? ` with ${user.capabilities.join(', ')}` : ', no capabilities'}` : ''}`);
    try {
      svc.spec.beforeStart?.();
      const ids = user ? { uid: user.uid, gid: user.gid } : {};
      // The spawn is synchronous: the capabilities are passed on to this child alone.
      child = withAmbientCapabilities(user?.capabilities ?? [], () =>
        svc.spec.notifiesReady
          ? spawn(command, args, { argv0, env: withReadyFd(env ?? inheritedEnv()), detached: false, stdio: READY_STDIO, ...ids })
          : spawn(command, args, { argv0, env, detached: false, stdio: ['ignore', 'pipe', 'pipe'], ...ids }),
      );
      if (svc.spec.notifiesReady) ready = child.stdio[3] as Readable | null;
      ({ stdout, stderr } = child);
    } catch (err) {
      hooks.exited(svc, { error: toError(err) });
      return;
    }
    if (child.pid === undefined) {
      // ENOENT, EACCES...: libuv reports it as an 'error' on the next tick, with no 'exit'.
      const gen = svc.gen;
      child.once('error', (err) => {
        if (svc.gen === gen && !svc.run) hooks.exited(svc, { error: err });
      });
      return;
    }
  }
  child.on('error', () => {}); // after a successful spawn only kill() can fail; 'exit' still follows

  let resolveExited!: () => void;
  const exited = new Promise<void>((resolve) => (resolveExited = resolve));
  const run: Run = { child, pid: child.pid!, startedAt: Date.now(), stopping: false, exited, resolveExited };
  svc.run = run;
  svc.healthy = undefined;
  // Into its cgroup first: a nice value set before the move is kept, and the earlier the move,
  // the less of what it allocates is charged to machined's group.
  hooks.place(svc, run.pid);
  if (svc.spec.startNice !== undefined) setNice(run.pid, svc.spec.startNice);
  capture(stdout);
  capture(stderr);
  // The ready pipe carries one line; anything else on it is ignored.
  captureLines(ready ?? null, (line) => {
    if (line !== READY_LINE || svc.run !== run || run.ready) return;
    run.ready = true;
    run.onReady?.();
  });
  child.once('exit', (code, signal) => {
    if (svc.run === run) hooks.exited(svc, { code, signal });
  });
  hooks.record(svc, 'Running', `Process started (pid ${run.pid})`);
  hooks.started(svc, run);
}

/** machined's own environment, as a spawn without `env` would pass it. */
function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  return env;
}

/** Sends SIGTERM to the run's process, and SIGKILL if it still runs after the spec's stopTimeout. */
export function terminate(svc: Service, run: Run, hooks: Pick<SupervisorHooks, 'record'>): void {
  run.stopping = true;
  const timeout = svc.spec.stopTimeout ?? DEFAULT_STOP_TIMEOUT;
  hooks.record(svc, svc.state, `Stopping: sent SIGTERM to pid ${run.pid}`);
  run.child.kill('SIGTERM');
  run.killTimer = setTimeout(() => {
    hooks.record(svc, svc.state, `Still running ${timeout}ms after SIGTERM: sent SIGKILL`);
    run.child.kill('SIGKILL');
  }, timeout);
}

/** Forgets the service's process once it has ended: its timers stop, and its waiters resume. */
export function endRun(svc: Service): Run | undefined {
  const run = svc.run;
  if (run) {
    clearTimeout(run.healthTimer);
    clearTimeout(run.killTimer);
    svc.run = undefined;
    run.resolveExited();
  }
  return run;
}
