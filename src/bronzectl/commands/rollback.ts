// `bronzectl rollback`: each node boots the image of its other slot from now on (the one it
// ran before its last upgrade) and reboots into it. Prints nothing on success, as talosctl.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('rollback')
    .description('Rollback a node to the previous installation')
    .action(async () => {
      const s = ctx.session();
      await s.fanOut((c, o) => c.machine.Rollback({}, o));
    });
}
