// `bronzectl shutdown [--force]`: asks each node to power off (--force: skip the graceful steps).
// Prints nothing on success, as talosctl without --wait.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('shutdown')
    .description('Shutdown a node')
    .option('--force', 'if true, force a node to shutdown without a cordon/drain')
    .action(async (opts: { force?: boolean }) => {
      const s = ctx.session();
      await s.fanOut((c, o) => c.machine.Shutdown({ force: !!opts.force }, o));
    });
}
