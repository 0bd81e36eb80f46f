// `bronzectl processes [-s rss|cpu]` (alias ps): the node's processes, as talosctl.
import { Option, type Command } from 'commander';
import type { ProcessInfo } from '../../client/types.ts';
import type { Ctx } from '../session.ts';
import { humanizeBytes, table } from '../output.ts';

/** The command line talosctl shows: args with the first word replaced by the executable when they match. */
export function commandLine(p: ProcessInfo): string {
  if (!p.executable) return p.command;
  const args = p.args.trim();
  if (!args) return p.executable;
  const first = args.split(/\s+/)[0]!;
  const exe = p.executable.split(/\s+/)[0]!;
  return first === exe.slice(exe.lastIndexOf('/') + 1) ? p.executable + args.slice(first.length) : args;
}

export function register(program: Command, ctx: Ctx): void {
  program
    .command('processes')
    .alias('ps')
    .description('List running processes')
    .addOption(new Option('-s, --sort <column>', 'column to sort output by').choices(['rss', 'cpu']).default('rss'))
    .action(async (opts: { sort: 'rss' | 'cpu' }) => {
      const s = ctx.session();
      const replies = await s.fanOut((c, o) => c.machine.Processes({}, o));
      const rows = [['NODE', 'PID', 'STATE', 'THREADS', 'CPU-TIME', 'VIRTMEM', 'RESMEM', 'COMMAND']];
      for (const { node, msg } of replies) {
        const procs = [...(msg.processes ?? [])].sort((a, b) =>
          opts.sort === 'cpu' ? b.cpu_time - a.cpu_time : Number(BigInt(b.resident_memory) - BigInt(a.resident_memory)),
        );
        for (const p of procs) {
          rows.push([node.padStart(12), String(p.pid), p.state, String(p.threads), p.cpu_time.toFixed(2), humanizeBytes(p.virtual_memory), humanizeBytes(p.resident_memory), commandLine(p)]);
        }
      }
      if (replies.length > 0) s.out(table(rows));
    });
}
