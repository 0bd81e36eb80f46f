// `bronzectl bootstrap`: starts etcd's cluster on one control plane (MachineService.Bootstrap,
// talosctl's command). A second bootstrap is refused by the node, which says why.
import type { Command } from 'commander';
import type { Ctx } from '../program.ts';
import { UserError } from '../session.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('bootstrap')
    .description('Bootstrap the etcd cluster on the specified node')
    .option('--recover-skip-hash-check', 'skip integrity check when recovering etcd (use when recovering from data directory copy)')
    .action(async (opts: { recoverSkipHashCheck?: boolean }) => {
      const s = ctx.session();
      if ((await s.nodes()).length > 1) throw new UserError('"bootstrap" command is not supported with multiple nodes');
      await s.fanOut((c, o) => c.machine.bootstrap({ recover_skip_hash_check: Boolean(opts.recoverSkipHashCheck) }, o));
    });
}
