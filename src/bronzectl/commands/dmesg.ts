// `bronzectl dmesg [-f] [--tail]`: the kernel ring buffer, every line prefixed with its node.
// -f follows until Ctrl-C; --tail with -f shows only new messages.
import type { Command } from 'commander';
import type { Ctx } from '../program.ts';
import { LineSlicer } from '../output.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('dmesg')
    .description('Retrieve kernel logs')
    .option('-f, --follow', 'specify if the kernel log should be streamed')
    .option('--tail', 'specify if only new messages should be sent (makes sense only when combined with --follow)')
    .action(async (opts: { follow?: boolean; tail?: boolean }) => {
      const s = ctx.session();
      const lines = new LineSlicer((node, line) => s.out(`${node}: ${line}\n`));
      await s.streamFanOut(
        (c, o) => c.machine.dmesg({ follow: !!opts.follow, tail: !!opts.tail }, o),
        (node, msg) => lines.push(node, msg.bytes),
      );
      lines.flush();
    });
}
