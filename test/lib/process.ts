// Daemons that tests start (containerd, docker-registry): waiting for one to be ready, and
// stopping it.
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `ready` every 50 ms until it holds. Throws, with the daemon's `log`, if the process exits
 * first or `timeoutMs` passes (then it is killed).
 */
export async function waitReady(proc: ChildProcess, what: string, ready: () => boolean | Promise<boolean>, timeoutMs: number, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (proc.exitCode !== null) throw new Error(`${what} exited (${proc.exitCode}):\n${log()}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`${what} did not start:\n${log()}`);
    }
    await sleep(50);
  }
}

/** SIGTERM, then SIGKILL if it is still running after `graceMs`; resolves once it has exited. */
export async function stopProcess(proc: ChildProcess, graceMs: number): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  const t = setTimeout(() => proc.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(t);
}
