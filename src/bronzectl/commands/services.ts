// `bronzectl services`: the services machined supervises, one row per service per node, as talosctl.
import type { Command } from 'commander';
import { timestampToDate, type ServiceInfo } from '../../client/types.ts';
import type { Ctx } from '../session.ts';
import { goDurationString, table } from '../output.ts';

/** talosctl's HEALTH column: "?" unknown, "OK" healthy, "Fail" otherwise. */
export function healthStatus(s: ServiceInfo): string {
  if (!s.health || s.health.unknown) return '?';
  return s.health.healthy ? 'OK' : 'Fail';
}

function lastEvent(s: ServiceInfo) {
  const events = s.events?.events ?? [];
  return events[events.length - 1];
}

export function lastChange(s: ServiceInfo, now = Date.now()): string {
  const ts = timestampToDate(lastEvent(s)?.ts);
  return ts ? `${goDurationString(now - ts.getTime())} ago` : '';
}

export function serviceRows(replies: Array<{ node: string; msg: { services: ServiceInfo[] } }>, now = Date.now()): string[][] {
  const rows = [['NODE', 'SERVICE', 'STATE', 'HEALTH', 'LAST CHANGE', 'LAST EVENT']];
  for (const { node, msg } of replies) {
    const svcs = [...(msg.services ?? [])].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const svc of svcs) rows.push([node, svc.id, svc.state, healthStatus(svc), lastChange(svc, now), lastEvent(svc)?.msg || '<none>']);
  }
  return rows;
}

export function register(program: Command, ctx: Ctx): void {
  program
    .command('services')
    .description('List services')
    .action(async () => {
      const s = ctx.session();
      const replies = await s.fanOut((c, o) => c.machine.ServiceList({}, o));
      if (replies.length > 0) s.out(table(serviceRows(replies)));
    });
}
