// Health checks of a running service's process.
//
// Health checks back off instead of flapping: a service that has passed its first check turns
// unhealthy only after several failed checks in a row (one slow answer on a loaded or
// memory-starved machine is not a failure of the service), and after each failure the next
// check comes later and may take longer (up to a cap), so that checking adds no load when the
// machine has none to spare. A success brings back the normal interval.

import { setNice } from '../../lib/nice.ts';
import { errorMessage, type Run, type Service, type SupervisorHooks } from './service.ts';

const DEFAULT_HEALTH_INTERVAL = 1000;
/** Health polling interval while a freshly started process has not yet passed a check. */
const STARTUP_HEALTH_INTERVAL = 200;

/** What a service's health says until its first check has passed: it is starting, not failing. */
export const STARTING_HEALTH_MESSAGE = 'Waiting for its socket (starting)';

/** What health says of a process that has written READY=1 (ServiceSpec.notifiesReady), until a check has passed. */
export const READY_MESSAGE = 'Ready (the process notified it)';

/** A health check that has not settled after max(healthInterval, this) counts as failed. */
const MIN_HEALTH_TIMEOUT = 1000;

/** SupervisorOptions' healthFailures, healthBackoffMax and healthTimeoutMax, with defaults. */
export interface HealthLimits {
  failures: number;
  backoffMax: number;
  timeoutMax: number;
}

/**
 * Polls the spec's health check while `run` is the service's process, sets svc.healthy and
 * svc.lastHealthMessage, and records (and reschedules) whenever healthy changes.
 */
export function pollHealth(svc: Service, run: Run, limits: HealthLimits, hooks: Pick<SupervisorHooks, 'record' | 'schedule'>): void {
  const check = svc.spec.healthCheck;
  if (!check) return;
  const timing = healthTiming(svc.spec.healthInterval ?? DEFAULT_HEALTH_INTERVAL, { backoffMax: limits.backoffMax, timeoutMax: limits.timeoutMax });
  // Until the process has passed its first check, poll quickly: dependents wait on it.
  let passedOnce = false;
  // It said READY=1 before any check had passed: the first check that passes is recorded too.
  let unconfirmed = false;
  let failures = 0; // in a row
  let reniced = false;
  let checking = false;
  /** Takes one outcome: a check's, or (notified) the process's own READY=1. */
  const settle = (ok: boolean, error: string, notified = false) => {
    failures = ok ? 0 : failures + 1;
    let healthy: boolean;
    let message: string;
    if (notified) {
      [healthy, message] = [true, READY_MESSAGE];
    } else if (ok) {
      [healthy, message] = [true, 'Health check successful'];
    } else if (!passedOnce) {
      // Until its first success a service is starting (its socket is not there yet): not a failure.
      [healthy, message] = [false, STARTING_HEALTH_MESSAGE];
    } else if (failures < limits.failures) {
      // Not yet: a slow answer under load; the service stays healthy, and the message says so.
      [healthy, message] = [svc.healthy !== false, `Health check failed (${failures} of ${limits.failures} in a row before it counts): ${error}`];
    } else {
      [healthy, message] = [false, `Health check failed: ${error}`];
    }
    svc.lastHealthMessage = message;
    const confirming = ok && !notified && unconfirmed;
    if (svc.healthy !== healthy || confirming) {
      svc.healthy = healthy;
      hooks.record(svc, svc.state, message);
      hooks.schedule();
    }
    if (ok && !notified) unconfirmed = false;
    // A service started at a lower priority (startNice) listens or has passed a check: it
    // serves at the priority of the others.
    if (!reniced && svc.spec.startNice !== undefined && (ok || svc.spec.listening?.() === true)) {
      reniced = true;
      setNice(run.pid, 0);
    }
    passedOnce ||= ok;
  };
  const poll = async (): Promise<void> => {
    let ok = true;
    let error = '';
    checking = true;
    try {
      await withTimeout(Promise.resolve().then(check), timing.timeout(failures));
    } catch (err) {
      ok = false;
      error = errorMessage(err);
    }
    checking = false;
    if (svc.run !== run) return; // the process exited meanwhile
    // Being stopped, a daemon closes its socket first: that is the stop, not a failure.
    if (run.stopping) return;
    settle(ok, error);
    run.healthTimer = setTimeout(poll, passedOnce ? timing.next(failures) : timing.startup());
  };
  run.onReady = () => {
    if (passedOnce || svc.run !== run || run.stopping) return;
    unconfirmed = true;
    settle(true, '', true);
    // A check under way reschedules when it ends; a waiting one comes at the normal interval.
    if (!checking) {
      clearTimeout(run.healthTimer);
      run.healthTimer = setTimeout(poll, timing.next(0));
    }
  };
  run.healthTimer = setTimeout(poll, 0);
  if (run.ready) run.onReady();
}

/**
 * When health checks run and how long one may take, after `failures` failed checks in a row:
 * the interval and the timeout double with each failure (up to their caps), and come back to
 * normal with a success. Before the first success (startup) checks come quickly.
 */
export function healthTiming(interval: number, caps: { backoffMax: number; timeoutMax: number }) {
  const grow = (base: number, failures: number, cap: number) => Math.max(base, Math.min(base * 2 ** Math.min(failures, 16), cap));
  return {
    next: (failures: number) => grow(interval, failures, caps.backoffMax),
    timeout: (failures: number) => grow(Math.max(interval, MIN_HEALTH_TIMEOUT), failures, caps.timeoutMax),
    // A starting service's checks fail at once (no socket yet) and cost nothing: no backoff, so that it counts as up as soon as it is.
    startup: () => Math.min(interval, STARTUP_HEALTH_INTERVAL),
  };
}

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms}ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
