// The restart policy: what follows when a service's process has ended (Finished, Failed, or a
// restart), and the exponential backoff of restarts, which starts over once a process has
// stayed up long enough.

import type { Exit, Run, Service, SupervisorHooks } from './service.ts';

/** SupervisorOptions' backoffBase, backoffMax and stableAfter, with defaults. */
export interface Backoff {
  base: number;
  max: number;
  stableAfter: number;
}

/**
 * Applies the spec's restart policy to a process that ended (`run`, undefined if it never
 * started): Finished when stopped or done, Failed, or Waiting for a restart after the backoff.
 */
export function afterExit(svc: Service, run: Run | undefined, exit: Exit, backoff: Backoff, hooks: Pick<SupervisorHooks, 'record' | 'schedule'>): void {
  const what = describeExit(exit);
  const policy = svc.spec.restart ?? 'always';
  const success = !('error' in exit) && exit.code === 0;

  if (!svc.wanted) {
    hooks.record(svc, 'Finished', `Stopped: ${what}`);
  } else if (success && policy !== 'always') {
    svc.wanted = false;
    svc.completed = true;
    hooks.record(svc, 'Finished', capitalize(what));
  } else if (!success && policy === 'never') {
    svc.wanted = false;
    hooks.record(svc, 'Failed', capitalize(what));
  } else {
    restartLater(svc, run, what, backoff, hooks);
  }
}

function restartLater(svc: Service, run: Run | undefined, what: string, backoff: Backoff, hooks: Pick<SupervisorHooks, 'record' | 'schedule'>): void {
  if (run && Date.now() - run.startedAt >= backoff.stableAfter) svc.attempt = 0;
  const delay = Math.min(backoff.base * 2 ** svc.attempt, backoff.max);
  svc.attempt++;
  hooks.record(svc, 'Waiting', `${capitalize(what)}; restarting in ${delay}ms`);
  svc.restartTimer = setTimeout(() => {
    svc.restartTimer = undefined;
    svc.restarts++;
    svc.pendingStart = true;
    hooks.schedule();
  }, delay);
}

function describeExit(exit: Exit): string {
  if ('error' in exit) return `failed to start: ${exit.error.message}`;
  if (exit.signal) return `process killed by signal ${exit.signal}`;
  return `process exited with code ${exit.code}`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
