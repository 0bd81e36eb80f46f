// `bronzectl service <id> [start|stop|restart|status]`: one service's details (the default), or
// an action on it, as talosctl.
import { Argument, type Command } from 'commander';
import type { ServiceInfo } from '../../client/types.ts';
import { timestampToDate } from '../../client/types.ts';
import type { Ctx } from '../program.ts';
import { goDurationString, table } from '../output.ts';
import { healthStatus } from './services.ts';

export function serviceDetails(node: string, svc: ServiceInfo, now = Date.now()): string {
  const rows: string[][] = [
    ['NODE', node],
    ['ID', svc.id],
    ['STATE', svc.state],
    ['HEALTH', healthStatus(svc)],
  ];
  if (svc.health?.last_message) rows.push(['LAST HEALTH MESSAGE', svc.health.last_message]);
  let label = 'EVENTS';
  const events = svc.events?.events ?? [];
  for (const ev of [...events].reverse()) {
    const ts = timestampToDate(ev.ts);
    rows.push([label, `[${ev.state}]: ${ev.msg}${ts ? ` (${goDurationString(now - ts.getTime())} ago)` : ''}`]);
    label = '';
  }
  return table(rows);
}

export function register(program: Command, ctx: Ctx): void {
  program
    .command('service')
    .description('Retrieve the state of a service (or all services), control service state')
    .argument('<id>', 'service id (see `bronzectl services`)')
    .addArgument(new Argument('[action]', 'what to do').choices(['status', 'start', 'stop', 'restart']).default('status'))
    .action(async (id: string, action: 'status' | 'start' | 'stop' | 'restart') => {
      const s = ctx.session();
      if (action === 'status') {
        const replies = await s.fanOut((c, o) => c.machine.serviceList(o));
        const parts: string[] = [];
        for (const { node, msg } of replies) {
          const svc = (msg.services ?? []).find((x) => x.id === id);
          if (!svc) s.fail(node, `service ${JSON.stringify(id)} is not registered`);
          else parts.push(serviceDetails(node, svc));
        }
        if (parts.length > 0) s.out(parts.join('\n'));
        return;
      }
      const replies = await s.fanOut((c, o) =>
        action === 'start' ? c.machine.serviceStart(id, o) : action === 'stop' ? c.machine.serviceStop(id, o) : c.machine.serviceRestart(id, o),
      );
      if (replies.length > 0) s.out(table([['NODE', 'RESPONSE'], ...replies.map(({ node, msg }) => [node, msg.resp])]));
    });
}
