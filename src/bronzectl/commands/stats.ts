// `bronzectl stats [-k]`: talosctl's container stats. A Bronze node has no container runtime:
// the node answers an empty list, and bronzectl prints the header and says so.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { table } from '../output.ts';
import { NO_CONTAINER_RUNTIME, namespace } from './containers.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('stats')
    .description('Get container stats')
    .option('-k, --kubernetes', 'use the k8s.io containerd namespace')
    .action(async (opts: { kubernetes?: boolean }) => {
      const s = ctx.session();
      const replies = await s.fanOut((c, o) => c.machine.Stats({ namespace: namespace(opts.kubernetes), driver: opts.kubernetes ? 'CRI' : 'CONTAINERD' }, o));
      const rows = [['NODE', 'NAMESPACE', 'ID', 'MEMORY(MB)', 'CPU']];
      for (const { node, msg } of replies) for (const st of msg.stats ?? []) rows.push([node, st.namespace, st.id, (Number(st.memory_usage) / 1024 / 1024).toFixed(2), String(st.cpu_usage)]);
      if (replies.length === 0) return;
      s.out(table(rows));
      if (rows.length === 1) s.warn(NO_CONTAINER_RUNTIME);
    });
}
