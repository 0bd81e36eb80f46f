// `bronzectl netstat` (alias ss): the node's sockets, with talosctl's flags and columns.
// Bronze runs no containers, so there are no pods: -k adds an empty Pod column and naming a
// pod finds none.
import type { Command } from 'commander';
import type { ConnectRecord, NetstatRequest } from '../../client/types.ts';
import type { Ctx } from '../session.ts';
import { table } from '../output.ts';
import { UserError } from '../session.ts';

interface Flags {
  verbose?: boolean;
  extend?: boolean;
  programs?: boolean;
  timers?: boolean;
  listening?: boolean;
  all?: boolean;
  pods?: boolean;
  tcp?: boolean;
  udp?: boolean;
  udplite?: boolean;
  raw?: boolean;
  ipv4?: boolean;
  ipv6?: boolean;
}

/** talosctl's request for these flags. */
export function netstatRequest(f: Flags): NetstatRequest {
  const p = { tcp: !!f.tcp, tcp6: !!f.tcp, udp: !!f.udp, udp6: !!f.udp, udplite: !!f.udplite, udplite6: !!f.udplite, raw: !!f.raw, raw6: !!f.raw };
  if (f.verbose) for (const k of Object.keys(p) as Array<keyof typeof p>) p[k] = true;
  if (!Object.values(p).some(Boolean)) Object.assign(p, { tcp: true, tcp6: true, udp: true, udp6: true });
  if (f.ipv4 && !f.ipv6) Object.assign(p, { tcp6: false, udp6: false, udplite6: false, raw6: false });
  if (f.ipv6 && !f.ipv4) Object.assign(p, { tcp: false, udp: false, udplite: false, raw: false });
  return {
    filter: f.all ? 'ALL' : f.listening ? 'LISTENING' : 'CONNECTED',
    feature: { pid: !!f.programs },
    l4proto: p,
    netns: { hostnetwork: true, allnetns: !!f.pods },
  };
}

export function netstatRow(r: ConnectRecord, f: Flags): string[] {
  const row = [r.l4proto, String(r.rxqueue), String(r.txqueue), `${r.localip}:${r.localport}`, `${r.remoteip}:${r.remoteport === 0 ? '*' : r.remoteport}`, r.state === 'CLOSE' ? '' : r.state];
  if (f.extend) row.push(String(r.uid), String(r.inode));
  if (f.programs) row.push(r.process?.pid ? `${r.process.pid}/${r.process.name}` : '-');
  if (f.pods) row.push('-');
  if (f.timers) row.push(`${r.tr.toLowerCase()} (${(Number(r.timerwhen) / 100).toFixed(2)}/${r.retrnsmt}/${r.timeout})`);
  return row;
}

export function register(program: Command, ctx: Ctx): void {
  program
    .command('netstat')
    .alias('ss')
    .description('Show network connections and sockets')
    .argument('[pod]', 'a pod\'s connections ("namespace/pod"); Bronze runs no pods')
    .option('-v, --verbose', 'display sockets of all supported transport protocols')
    .option('-x, --extend', 'show detailed socket information')
    .option('-p, --programs', 'show process using socket')
    .option('-o, --timers', 'display timers')
    .option('-l, --listening', 'display listening server sockets')
    .option('-a, --all', 'display all sockets states (default: connected)')
    .option('-k, --pods', 'show sockets used by Kubernetes pods')
    .option('-t, --tcp', 'display only TCP sockets')
    .option('-u, --udp', 'display only UDP sockets')
    .option('-U, --udplite', 'display only UDPLite sockets')
    .option('-w, --raw', 'display only RAW sockets')
    .option('-4, --ipv4', 'display only ipv4 sockets')
    .option('-6, --ipv6', 'display only ipv6 sockets')
    .action(async (pod: string | undefined, f: Flags) => {
      if (pod && f.pods) throw new UserError('cannot use --pods and specify a pod');
      if (pod) throw new UserError(`pod ${pod} not found: Bronze nodes run no pods`);
      const s = ctx.session();
      const replies = await s.fanOut((c, o) => c.machine.Netstat(netstatRequest(f), o));
      const header = ['NODE', 'Proto', 'Recv-Q', 'Send-Q', 'Local Address', 'Foreign Address', 'State'];
      if (f.extend) header.push('Uid', 'Inode');
      if (f.programs) header.push('PID/Program name');
      if (f.pods) header.push('Pod');
      if (f.timers) header.push('Timer');
      const rows = [header];
      for (const { node, msg } of replies) for (const r of msg.connectrecord ?? []) rows.push([node, ...netstatRow(r, f)]);
      if (rows.length > 1) s.out(table(rows));
    });
}
