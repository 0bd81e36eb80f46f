// `bronzectl usage [path...] [-a] [-d depth] [-t threshold] [-H]` (alias du): disk usage, as
// talosctl's `usage`: directories (with -a files too) and their sizes, deepest first; -d 0
// (the default) shows each path's total only, as talosctl (it sends depth + 1).
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { intArg } from '../args.ts';
import { humanizeBytes, table } from '../output.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('usage')
    .alias('du')
    .description('Retrieve a disk usage')
    .argument('[paths...]', 'paths to measure', ['/'])
    .option('-H, --humanize', 'humanize size and time in the output')
    .option('-a, --all', 'write counts for all files, not just directories')
    .option('-t, --threshold <size>', 'threshold exclude entries smaller than SIZE if positive, or entries greater than SIZE if negative', intArg(), 0)
    .option('-d, --depth <depth>', 'maximum recursion depth', intArg(0), 0)
    .action(async (paths: string[], opts: { humanize?: boolean; all?: boolean; threshold: number; depth: number }) => {
      const s = ctx.session();
      const rows = [['NODE', 'SIZE', 'NAME']];
      await s.streamFanOut(
        (c, o) => c.machine.DiskUsage({ recursion_depth: opts.depth + 1, all: !!opts.all, threshold: opts.threshold, paths: paths.length ? paths : ['/'] }, o),
        (node, info) => {
          if (info.error) {
            s.fail(node, info.error);
            return;
          }
          rows.push([node, opts.humanize ? humanizeBytes(info.size) : String(info.size), info.relative_name]);
        },
      );
      if (rows.length > 1) s.out(table(rows));
    });
}
