// `bronzectl reboot [--mode default|powercycle|force]` (force: skip the etcd quorum check): asks each node to reboot. As talosctl without
// --wait, it prints nothing on success; follow the reboot with `bronzectl events`.
import { Option, type Command } from 'commander';
import type { Ctx } from '../session.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('reboot')
    .description('Reboot a node')
    .addOption(new Option('-m, --mode <mode>', 'select the reboot mode').choices(['default', 'powercycle', 'force']).default('default'))
    .action(async (opts: { mode: 'default' | 'powercycle' | 'force' }) => {
      const s = ctx.session();
      await s.fanOut((c, o) => c.machine.Reboot({ mode: opts.mode === 'powercycle' ? 'POWERCYCLE' : opts.mode === 'force' ? 'FORCE' : 'DEFAULT' }, o));
    });
}
