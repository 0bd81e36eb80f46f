// Before a service's process starts: its condition (false → Skipped) and its prepare step
// (Talos's PreFunc: the service stays Preparing until it resolves with the arguments and
// environment to start with). Both are asynchronous; a start or stop request meanwhile bumps
// svc.gen, and their results are then dropped.

import { errorMessage, type Service, type SupervisorHooks } from './service.ts';
import type { ServiceSpec } from './types.ts';

/** Evaluates the condition: the service becomes pending (to start), Skipped, or Failed. */
export function checkCondition(svc: Service, condition: NonNullable<ServiceSpec['condition']>, hooks: Pick<SupervisorHooks, 'record' | 'schedule'>): void {
  hooks.record(svc, 'Waiting', 'Checking condition');
  const gen = svc.gen;
  void (async () => {
    let ok: boolean;
    try {
      ok = await condition();
    } catch (err) {
      if (svc.gen !== gen) return;
      svc.wanted = false;
      hooks.record(svc, 'Failed', `Condition failed: ${errorMessage(err)}`);
      return;
    }
    if (svc.gen !== gen) return;
    if (ok) {
      svc.pendingStart = true;
    } else {
      svc.wanted = false;
      hooks.record(svc, 'Skipped', 'Condition not met');
    }
    hooks.schedule();
  })();
}

/** Runs the spec's prepare step, then spawns with what it returned (if still wanted). */
export function prepare(svc: Service, hooks: Pick<SupervisorHooks, 'record' | 'spawn' | 'exited'>): void {
  svc.pendingStart = false;
  const gen = svc.gen;
  const abort = new AbortController();
  svc.preparing = abort;
  hooks.record(svc, 'Preparing', 'Running pre state');
  const report = (message: string) => {
    if (svc.gen === gen && svc.preparing === abort && svc.events.at(-1)?.message !== message) hooks.record(svc, 'Preparing', message);
  };
  void Promise.resolve()
    .then(() => svc.spec.prepare!(abort.signal, report))
    .then(
      (got) => {
        if (svc.preparing === abort) svc.preparing = undefined;
        if (svc.gen !== gen || !svc.wanted) return;
        hooks.spawn(svc, got ?? undefined);
      },
      (err: unknown) => {
        if (svc.preparing === abort) svc.preparing = undefined;
        if (svc.gen !== gen || !svc.wanted) return;
        hooks.exited(svc, { error: new Error(`pre state: ${errorMessage(err)}`) });
      },
    );
}
