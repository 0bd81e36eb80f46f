// `bronzectl service <id> [start|stop|restart|status]`: one service's details (the default), or
// an action on it, as talosctl. `service apid restart` restarts the service the call itself goes
// through: the node replies first, then restarts it, and bronzectl waits until every node's apid
// answers again (Running and healthy), or fails after a minute.
import { Argument, type Command } from 'commander';
import type { ServiceInfo } from '../../client/types.ts';
import { timestampToDate } from '../../client/types.ts';
import type { Ctx } from '../session.ts';
import { UserError, clientLib, errorText, type Session } from '../session.ts';
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

const API_SERVICE = 'apid';

/**
 * Waits until apid answers again on every target node after a restart: ServiceList through
 * it, with apid Running and healthy. The first attempt is after `settleMs` (the restart starts
 * a moment after the reply, and the old process would still answer).
 */
export async function waitForApid(s: Session, o: { timeoutMs?: number; settleMs?: number; everyMs?: number } = {}): Promise<void> {
  const targets = await s.nodes();
  const client = s.insecure ? await s.insecureClient(s.insecureTargets()[0]!) : await s.client();
  const { nodes: nodesMetadata } = await clientLib();
  const deadline = Date.now() + (o.timeoutMs ?? 60_000);
  const wanted = Math.max(1, targets.length);
  let last = 'no answer yet';
  await new Promise((r) => setTimeout(r, o.settleMs ?? 1000));
  while (Date.now() < deadline) {
    try {
      const reply = await client.machine.ServiceList({}, s.callOptions({ deadline: Date.now() + 5000, ...(targets.length && !s.insecure ? { metadata: nodesMetadata(targets) } : {}) }));
      const msgs = reply.messages ?? [];
      const down = msgs.filter((m) => m.metadata?.error || !(m.services ?? []).some((x) => x.id === API_SERVICE && x.state === 'Running' && x.health?.healthy));
      if (msgs.length >= wanted && down.length === 0) return;
      last = down.map((m) => m.metadata?.error ?? `${m.metadata?.hostname ?? 'node'}: apid not yet Running and healthy`).join('; ') || `${msgs.length} of ${wanted} nodes answered`;
    } catch (e) {
      last = errorText(e);
    }
    await new Promise((r) => setTimeout(r, o.everyMs ?? 1000));
  }
  throw new UserError(`apid did not come back within ${Math.round((o.timeoutMs ?? 60_000) / 1000)} s: ${last}`);
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
        const replies = await s.fanOut((c, o) => c.machine.ServiceList({}, o));
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
        action === 'start' ? c.machine.ServiceStart({ id }, o) : action === 'stop' ? c.machine.ServiceStop({ id }, o) : c.machine.ServiceRestart({ id }, o),
      );
      if (replies.length > 0) s.out(table([['NODE', 'RESPONSE'], ...replies.map(({ node, msg }) => [node, msg.resp])]));
      // The restart follows the reply: wait for the API to be back, so that the next command finds it.
      if (id === API_SERVICE && action === 'restart' && replies.length > 0) {
        await waitForApid(s);
        s.warn('apid is back: Running and healthy');
      }
    });
}
