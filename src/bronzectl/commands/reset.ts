// `bronzectl reset [--graceful[=false]] [--reboot] [--system-labels-to-wipe STATE,EPHEMERAL]`:
// wipes each node's system partitions and powers it off (or, with --reboot, reboots it into
// maintenance mode). As talosctl: --graceful defaults to true (leave etcd on a control-plane
// node first; --graceful=false skips that), --reboot to false (power off), and no
// --system-labels-to-wipe means every wipeable one (STATE and EPHEMERAL); the flag is
// repeatable and takes comma-separated labels. Prints nothing on success; follow with
// `bronzectl events` or `bronzectl dmesg`.
import { InvalidArgumentError, type Command } from 'commander';
import type { Ctx } from '../session.ts';
import { listArg } from '../args.ts';

/** A Go-style boolean flag value: `--flag` alone is true, `--flag=false` false. */
function boolArg(value: string): boolean {
  const v = value.trim().toLowerCase();
  if (['true', 't', '1'].includes(v)) return true;
  if (['false', 'f', '0'].includes(v)) return false;
  throw new InvalidArgumentError(`${JSON.stringify(value)} is not a boolean (true or false).`);
}

export function register(program: Command, ctx: Ctx): void {
  program
    .command('reset')
    .description('Reset a node: wipe its system partitions, then power it off (or reboot it into maintenance mode)')
    .option('--graceful [bool]', 'leave etcd (control plane) before wiping; --graceful=false skips it', boolArg, true)
    .option('--reboot [bool]', 'reboot (into maintenance mode) after the reset instead of powering off', boolArg, false)
    .option('--system-labels-to-wipe <labels>', 'only wipe these system partitions (STATE, EPHEMERAL; repeatable, comma-separated; default: both)', listArg, [])
    .action(async (opts: { graceful: boolean; reboot: boolean; systemLabelsToWipe: string[] }) => {
      const s = ctx.session();
      const labels = [...new Set(opts.systemLabelsToWipe.map((l) => l.toUpperCase()))];
      await s.fanOut((c, o) =>
        c.machine.Reset({ graceful: opts.graceful, reboot: opts.reboot, system_partitions_to_wipe: labels.map((label) => ({ label, wipe: true })) }, o),
      );
    });
}
