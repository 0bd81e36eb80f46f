// A daemon's readiness notification to its supervisor, after systemd's sd_notify (Type=notify):
// the supervisor starts the daemon with a pipe as its fourth descriptor, named in
// BRONZE_READY_FD, and the daemon writes READY=1 to it once its socket serves, then closes it.
// machined counts the daemon as up from that line instead of from its first gRPC health check,
// which a daemon busy with its start (udevd's coldplug, networkd's first reconcile) and a
// machined busy with everyone's first publications answered seconds later under QEMU/TCG. The
// health checks follow at their interval, and the first that passes is recorded as well.
import fs from 'node:fs';

export const READY_FD_ENV = 'BRONZE_READY_FD';
/** The descriptor a supervised daemon gets for it: the one after stdin, stdout and stderr. */
export const READY_FD = 3;
export const READY_LINE = 'READY=1';

/** spawn()'s stdio for a process that notifies readiness: stdout, stderr and the ready pipe piped. */
export const READY_STDIO: ['ignore', 'pipe', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe', 'pipe'];

/** The environment of a process started with READY_STDIO. */
export function withReadyFd(env: Record<string, string>): Record<string, string> {
  return { ...env, [READY_FD_ENV]: String(READY_FD) };
}

/**
 * Keeps BRONZE_READY_FD only if its descriptor is the supervisor's pipe, checked at the very
 * start of the process (src/main.ts), before it has opened descriptors of its own: Node's
 * 'pipe' stdio is a socket pair, and what Node opens first (epoll, eventfd, a pipe for
 * signals) is never a socket. A process started with the variable but without the pipe (by
 * hand, or by a program that passed its environment on) would otherwise write into one of
 * those, or later into a socket of its own, and close it.
 */
export function checkReadyFd(env: NodeJS.ProcessEnv = process.env): void {
  const raw = env[READY_FD_ENV];
  if (raw === undefined) return;
  const fd = Number(raw);
  let ours = false;
  try {
    ours = Number.isInteger(fd) && fd > 2 && fs.fstatSync(fd).isSocket();
  } catch {
    // EBADF: not open
  }
  if (!ours) delete env[READY_FD_ENV];
}

/**
 * Tells the supervisor this process is ready, once: writes READY=1 to the descriptor
 * BRONZE_READY_FD names and closes it, and drops the variable so that nothing this process
 * starts inherits it. Whether a supervisor was told (false when none asked, or the pipe is gone).
 */
export function notifyReady(env: NodeJS.ProcessEnv = process.env): boolean {
  const raw = env[READY_FD_ENV];
  if (raw === undefined) return false;
  delete env[READY_FD_ENV];
  const fd = Number(raw);
  // 0-2 are stdio: a value naming one of them is a mistake, never the pipe.
  if (!Number.isInteger(fd) || fd <= 2) return false;
  try {
    fs.writeSync(fd, `${READY_LINE}\n`);
    return true;
  } catch {
    return false; // EBADF (started without the pipe), EPIPE (the supervisor is gone)
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      // not open: nothing to close
    }
  }
}
