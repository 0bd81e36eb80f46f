// `bronzectl stats [-k] [--namespace NS]`: talosctl's container stats (memory in MB, cpu in
// nanoseconds), for the namespace `containers` reads (default `taloscontainers`).
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { table } from '../output.ts';
import { type NamespaceOptions, displayId, namespaceOptions, containerTarget } from './containers.ts';

export function register(program: Command, ctx: Ctx): void {
  namespaceOptions(program.command('stats').description('Get container stats')).action(async (opts: NamespaceOptions) => {
    const s = ctx.session();
    const req = containerTarget(opts);
    const replies = await s.fanOut((c, o) => c.machine.Stats(req, o));
    const rows = [['NODE', 'NAMESPACE', 'ID', 'MEMORY(MB)', 'CPU']];
    // In the node's order: by id (src/machined/api/containers.ts).
    for (const { node, msg } of replies) {
      const list = msg.stats ?? [];
      // talosctl: float64(MemoryUsage)*1e-6 with %.2f (MB, not MiB).
      for (const st of list) rows.push([node, st.namespace, displayId(st), (Number(st.memory_usage) * 1e-6).toFixed(2), String(st.cpu_usage)]);
    }
    if (replies.length === 0) return;
    s.out(table(rows));
  });
}
