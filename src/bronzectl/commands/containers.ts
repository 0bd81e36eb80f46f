// `bronzectl containers [-k]` (alias c): talosctl's command for containerd's containers. A
// Bronze node has no container runtime: the node answers an empty list, and bronzectl prints
// the header and says so (`stats` likewise).
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { table } from '../output.ts';

export const NO_CONTAINER_RUNTIME = 'no containers: Bronze nodes have no container runtime';

export function namespace(kubernetes?: boolean): string {
  return kubernetes ? 'k8s.io' : 'system';
}

export function register(program: Command, ctx: Ctx): void {
  program
    .command('containers')
    .alias('c')
    .description('List containers')
    .option('-k, --kubernetes', 'use the k8s.io containerd namespace')
    .action(async (opts: { kubernetes?: boolean }) => {
      const s = ctx.session();
      const replies = await s.fanOut((c, o) => c.machine.Containers({ namespace: namespace(opts.kubernetes), driver: opts.kubernetes ? 'CRI' : 'CONTAINERD' }, o));
      const rows = [['NODE', 'NAMESPACE', 'ID', 'IMAGE', 'PID', 'STATUS']];
      for (const { node, msg } of replies) for (const c of msg.containers ?? []) rows.push([node, c.namespace, c.id, c.image, String(c.pid), c.status]);
      if (replies.length === 0) return;
      s.out(table(rows));
      if (rows.length === 1) s.warn(NO_CONTAINER_RUNTIME);
    });
}
