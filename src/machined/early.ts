// machined's first act as PID 1, before its own bundle has loaded: start the services that
// depend on nothing (apid and networkd: the API needs both), so that they start while machined
// loads and mounts instead of after it. Under QEMU/TCG with 2 vCPUs that is seconds earlier.
// They load at FIRST_SERVICES_LOAD_NICE until machined has loaded its own bundle.
// The supervisor adopts them as their first run (SupervisorOptions.adopt); until then their
// output waits in the pipes. Only the light service graph is imported here: this runs from the
// single executable's main script (src/main.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough, type Readable } from 'node:stream';
import fs from 'node:fs';
import { READY_STDIO, withReadyFd } from '../lib/ready.ts';
import { selfInvocation } from '../lib/self.ts';
import { setNice } from '../lib/nice.ts';
import { type UnprivilegedDaemon, daemonUser, ensureDaemonDirs } from '../lib/daemon-users.ts';
import { runDir, secretsDir } from '../contract/paths.ts';
import { FIRST_SERVICES_LOAD_NICE, SERVICE_ENV, baseServiceEnv, daemonEnv, firstServices } from './service-graph.ts';

/**
 * A process started before the supervisor, with its output. The output goes through streams of
 * our own: Node discards what nobody reads of a child's pipes when the child exits, and one
 * that ends before it is taken over must still be able to say why.
 */
export interface EarlyProcess {
  child: ChildProcess;
  stdout: Readable;
  stderr: Readable;
  /** Its ready pipe (lib/ready.ts): every daemon notifies, as services.ts's specs say. */
  ready: Readable;
}

export type EarlyChildren = Map<string, EarlyProcess>;

/**
 * Spawns the first services exactly as the supervisor would (same binary, argv0, environment,
 * stdio). One that cannot be spawned is left to the supervisor, which reports why.
 * Needs /system (preinit mounts it) for their sockets.
 */
export function startFirstServices(): EarlyChildren {
  const out: EarlyChildren = new Map();
  try {
    // apid watches for the certificates machined writes there; the directory is machined's.
    fs.mkdirSync('/system/secrets', { recursive: true, mode: 0o700 });
  } catch {
    return out; // no writable /system (an older preinit): the supervisor starts them later
  }
  for (const id of firstServices()) {
    const inv = selfInvocation(id);
    let child: ChildProcess;
    try {
      // apid under its own user, as the supervisor would start it (services.ts); it needs no capability.
      const user = daemonUser(id);
      if (user?.capabilities.length) continue; // one with capabilities: the supervisor starts it
      if (user) ensureDaemonDirs(id as UnprivilegedDaemon, { runDir: runDir(), secretsDir: secretsDir() });
      const ids = user ? { uid: user.uid, gid: user.gid } : {};
      child = spawn(inv.command, inv.args, { argv0: inv.argv0, env: withReadyFd(daemonEnv(id, baseServiceEnv({ ...SERVICE_ENV }))), detached: false, stdio: READY_STDIO, ...ids });
    } catch {
      continue;
    }
    child.on('error', () => {}); // a failed spawn has no pid; the supervisor spawns it again
    if (child.pid === undefined) continue;
    setNice(child.pid, FIRST_SERVICES_LOAD_NICE);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const ready = new PassThrough();
    child.stdout!.pipe(stdout);
    child.stderr!.pipe(stderr);
    (child.stdio[3] as Readable).pipe(ready);
    out.set(id, { child, stdout, stderr, ready });
  }
  return out;
}

/** Back to the others' priority, once machined has loaded (FIRST_SERVICES_LOAD_NICE). */
export function firstServicesAtFullPriority(children: EarlyChildren | undefined): void {
  for (const { child } of children?.values() ?? []) if (child.pid !== undefined) setNice(child.pid, 0);
}
