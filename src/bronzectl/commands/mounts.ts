// `bronzectl mounts` (alias df): mounted file systems and their usage, as talosctl.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { table } from '../output.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('mounts')
    .alias('df')
    .description('List mounts')
    .action(async () => {
      const s = ctx.session();
      const replies = await s.fanOut((c, o) => c.machine.Mounts({}, o));
      const rows = [['NODE', 'FILESYSTEM', 'SIZE(GB)', 'USED(GB)', 'AVAILABLE(GB)', 'PERCENT USED', 'MOUNTED ON']];
      for (const { node, msg } of replies) {
        for (const st of msg.stats ?? []) {
          const size = Number(st.size);
          const avail = Number(st.available);
          if (size === 0) continue; // talosctl skips those whose percentage is NaN
          const pct = 100 - (avail / size) * 100;
          rows.push([node, st.filesystem, (size * 1e-9).toFixed(2), ((size - avail) * 1e-9).toFixed(2), (avail * 1e-9).toFixed(2), `${pct.toFixed(2)}%`, st.mounted_on]);
        }
      }
      if (replies.length > 0) s.out(table(rows));
    });
}
