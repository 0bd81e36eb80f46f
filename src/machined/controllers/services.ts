// ServiceController: mirrors the supervisor's services into Services.v1alpha1.talos.dev resources
// (namespace runtime, id = service id, spec { running, healthy, unknown }), so that
// `get services` and watches see them. machined itself is listed too (running, health
// unknown), as in Talos. Stopped, waiting or failed services stay listed with running false.
//
// Its input is the supervisor, not a resource. Every supervisor event records the service's
// spec at that moment and schedules a pass; a pass first applies the recorded specs in order
// (so a quick restart still shows as running: false, then true, to watchers, even when both
// happened before the pass), then makes the resources match supervisor.list().

import type { Controller, ControllerContext } from '../../state/controller.ts';
import { type ServiceSpec, serviceDefinition } from '../../contract/resources/service.ts';
import type { ServiceEvent, ServiceInfo } from '../supervisor/types.ts';

export const SERVICE_CONTROLLER = 'ServiceController';
export const SERVICES_NAMESPACE = serviceDefinition.defaultNamespace;
export const SERVICES_TYPE = serviceDefinition.type;
export type { ServiceSpec };

/** What the controller needs of the supervisor. */
export interface ServiceStatusSource {
  list(): ServiceInfo[];
  on(event: 'event', fn: (id: string, ev: ServiceEvent) => void): unknown;
  off(event: 'event', fn: (id: string, ev: ServiceEvent) => void): unknown;
}

export function serviceSpec(info: Pick<ServiceInfo, 'state' | 'healthy'>): ServiceSpec {
  return { running: info.state === 'Running', healthy: info.healthy === true, unknown: info.healthy === undefined };
}

export interface ServiceControllerOptions {
  /** List machined itself (default true). */
  includeMachined?: boolean;
}

export function serviceController(supervisor: ServiceStatusSource, opts: ServiceControllerOptions = {}): Controller {
  const includeMachined = opts.includeMachined ?? true;
  let subscribed: ControllerContext | undefined;
  /** Specs seen at supervisor events, not yet applied. */
  const pending: Array<{ id: string; spec: ServiceSpec }> = [];
  // What this run of the controller last wrote, per id, and whether stale resources may be
  // left: it is the only writer of its type, so a spec it wrote is the one stored, and a pass
  // writes and lists only what changed. (At boot the supervisor's events came in dozens, each
  // a pass that read and rewrote every service: a few hundred resource copies in machined.)
  const written = new Map<string, string>();
  let listedIds: string | undefined;
  const apply = async (ctx: ControllerContext, id: string, spec: ServiceSpec) => {
    const key = JSON.stringify(spec);
    if (written.get(id) === key) return;
    written.delete(id);
    await ctx.state.apply(SERVICES_NAMESPACE, SERVICES_TYPE, id, spec);
    written.set(id, key);
  };
  return {
    name: SERVICE_CONTROLLER,
    inputs: [],
    outputs: [{ type: SERVICES_TYPE, kind: 'exclusive' }],
    async run(ctx: ControllerContext): Promise<void> {
      if (subscribed !== ctx) {
        // First pass of this run: from now on every supervisor event asks for another pass.
        subscribed = ctx;
        written.clear();
        listedIds = undefined;
        const onEvent = (id: string, ev: ServiceEvent) => {
          const info = supervisor.list().find((s) => s.id === id);
          pending.push({ id, spec: serviceSpec({ state: ev.state, healthy: info?.healthy }) });
          ctx.requeueAfter(0);
        };
        supervisor.on('event', onEvent);
        ctx.signal.addEventListener(
          'abort',
          () => {
            supervisor.off('event', onEvent);
            pending.length = 0;
          },
          { once: true },
        );
      }
      while (pending.length > 0) {
        const { id, spec } = pending[0]!;
        await apply(ctx, id, spec);
        pending.shift();
      }
      const desired = new Map<string, ServiceSpec>();
      if (includeMachined) desired.set('machined', { running: true, healthy: false, unknown: true });
      for (const info of supervisor.list()) desired.set(info.id, serviceSpec(info));

      for (const [id, spec] of desired) await apply(ctx, id, spec);
      // Services no longer supervised: looked for when the set of services changed, or while
      // one found before still waits on finalizers.
      const ids = [...desired.keys()].sort().join(',');
      if (ids === listedIds) return;
      let left = false;
      for (const r of await ctx.state.list(SERVICES_NAMESPACE, SERVICES_TYPE)) {
        if (desired.has(r.metadata.id) || r.metadata.owner !== SERVICE_CONTROLLER) continue;
        written.delete(r.metadata.id);
        if (!(await ctx.state.retire(r))) left = true;
      }
      listedIds = left ? undefined : ids;
    },
  };
}
