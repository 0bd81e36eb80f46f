// `bronzectl copy <src-path> -|<local-path>` (alias cp): a file or directory from one node as
// talosctl copies it: the node sends a .tar.gz; `-` writes it to stdout as it is, a local
// path (a directory, created when missing) receives it extracted (without the files'
// ownership and modes, as talosctl).
// The work itself is in cp-impl.ts, imported when the command runs.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { load } from '../lazy.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('copy')
    .alias('cp')
    .description('Copy data out from the node')
    .argument('<src-path>', 'file or directory on the node')
    .argument('<local-path>', '"-" for the .tar.gz on stdout, else a directory to extract into')
    .action(async (src: string, local: string) => {
      await (await load('cp')).copy(ctx, src, local);
    });
}
