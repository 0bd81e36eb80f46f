// `bronzectl repair <label>... [--zero-log]`: repairs system volumes of one node that did not
// mount at boot (machined leaves such a volume untouched and reports it in `get volumestatus`
// and `get machinestatus`): xfs_repair on each, its output as progress on stderr, a read-only
// mount to check it, then the node reboots to mount it. Exit 1 when the repair fails; then
// `bronzectl reset --system-labels-to-wipe <label> --reboot` erases the volume instead.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { listArg } from '../args.ts';
import { followProgress } from '../progress.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('repair')
    .description('Repair system volumes (STATE, EPHEMERAL) that did not mount at boot (xfs_repair), then reboot to mount them')
    .argument('<labels...>', 'the volumes to repair: STATE, EPHEMERAL (space- or comma-separated)')
    .option('--zero-log', 'let xfs_repair zero a log that only a mount could replay (xfs_repair -L: those changes are lost)')
    .action(async (labels: string[], opts: { zeroLog?: boolean }) => {
      const s = ctx.session();
      const names = [...new Set(labels.flatMap((l) => listArg(l, [])).map((l) => l.toUpperCase()))];
      await followProgress(s, 'repair', (c, o) => c.machine.Repair({ labels: names, zero_log: !!opts.zeroLog }, o));
    });
}
