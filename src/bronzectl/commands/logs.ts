// `bronzectl logs <id> [-f] [--tail N] [--insecure]`: a service's log, every line prefixed with its
// node as talosctl does. -f follows until Ctrl-C; --insecure reads a node in maintenance mode.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { intArg } from '../args.ts';
import { LineSlicer } from '../output.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('logs')
    .description('Retrieve logs for a service')
    .argument('<id>', 'service id (see `bronzectl services`)')
    .option('-f, --follow', 'specify if the logs should be streamed')
    .option('--tail <lines>', 'lines of log file to display (default is to show from the beginning)', intArg(-1), -1)
    .option('-i, --insecure', 'use the insecure (encrypted with no auth) maintenance service')
    .action(async (id: string, opts: { follow?: boolean; tail: number; insecure?: boolean }) => {
      const s = ctx.session();
      s.insecure = !!opts.insecure;
      const lines = new LineSlicer((node, line) => s.out(`${node}: ${line}\n`));
      await s.streamFanOut(
        (c, o) => c.machine.Logs({ namespace: 'system', id, follow: !!opts.follow, tail_lines: opts.tail }, o),
        (node, msg) => lines.push(node, msg.bytes),
      );
      lines.flush();
    });
}
