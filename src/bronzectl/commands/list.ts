// `bronzectl list [path] [-l] [-r] [-d depth] [-H] [-t f,d,l]` (alias ls): a directory listing, as talosctl.
import type { Command } from 'commander';
import type { FileType } from '../../client/types.ts';
import type { Ctx } from '../session.ts';
import { intArg, listArg } from '../args.ts';
import { fileModeString, humanizeBytes, shortDate, table } from '../output.ts';
import { UserError } from '../session.ts';

const TYPES: Record<string, FileType> = { f: 'REGULAR', d: 'DIRECTORY', l: 'SYMLINK', L: 'SYMLINK' };

export function register(program: Command, ctx: Ctx): void {
  program
    .command('list')
    .alias('ls')
    .description('Retrieve a directory listing')
    .argument('[path]', 'directory to list', '/')
    .option('-l, --long', 'display additional file details')
    .option('-r, --recurse', 'recurse into subdirectories')
    .option('-d, --depth <depth>', 'maximum recursion depth', intArg(1), 1)
    .option('-H, --humanize', 'humanize size and time in the output')
    .option('-t, --type <types>', 'filter by specified types: f (regular file), d (directory), l (symlink); repeatable, comma-separated', listArg)
    .action(async (root: string, opts: { long?: boolean; recurse?: boolean; depth: number; humanize?: boolean; type?: string[] }) => {
      const s = ctx.session();
      const types = (opts.type ?? []).map((t) => {
        const v = TYPES[t];
        if (!v) throw new UserError(`invalid file type ${JSON.stringify(t)}: want f, d or l`);
        return v;
      });
      const recurse = !!opts.recurse || opts.depth > 1;
      // -r alone: no depth limit; -d N: N levels.
      const depth = opts.recurse && opts.depth === 1 ? 0 : opts.depth;
      const rows = [opts.long ? ['NODE', 'MODE', 'UID', 'GID', 'SIZE(B)', 'LASTMOD', 'NAME'] : ['NODE', 'NAME']];
      await s.streamFanOut(
        (c, o) => c.machine.List({ root, recurse, recursion_depth: depth, types: [...new Set(types)] }, o),
        (node, info) => {
          if (info.error) {
            s.fail(node, `error reading file ${info.name}: ${info.error}`);
            return;
          }
          const name = info.relative_name || info.name;
          if (!opts.long) {
            rows.push([node, name]);
            return;
          }
          const modified = new Date(Number(info.modified) * 1000);
          rows.push([
            node,
            fileModeString(info.mode),
            String(info.uid),
            String(info.gid),
            opts.humanize ? humanizeBytes(info.size) : String(info.size),
            opts.humanize ? modified.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : shortDate(modified),
            info.link ? `${name} -> ${info.link}` : name,
          ]);
        },
      );
      if (rows.length > 1) s.out(table(rows));
    });
}
