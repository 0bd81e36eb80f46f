// `bronzectl dmesg [-f] [--tail] [--insecure]`: the kernel ring buffer, one line per kernel message,
// each prefixed with its node. -f follows until Ctrl-C; --tail with -f shows only new messages;
// --insecure reads a node in maintenance mode (-n names its endpoint), as talosctl.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('dmesg')
    .description('Retrieve kernel logs')
    .option('-f, --follow', 'specify if the kernel log should be streamed')
    .option('--tail', 'specify if only new messages should be sent (makes sense only when combined with --follow)')
    .option('-i, --insecure', 'use the insecure (encrypted with no auth) maintenance service')
    .action(async (opts: { follow?: boolean; tail?: boolean; insecure?: boolean }) => {
      const s = ctx.session();
      s.insecure = !!opts.insecure;
      // Each message is one kernel record, without a newline (Talos's wire): a line each.
      await s.streamFanOut(
        (c, o) => c.machine.Dmesg({ follow: !!opts.follow, tail: !!opts.tail }, o),
        (node, msg) => {
          const text = Buffer.from(msg.bytes ?? []).toString('utf8').replace(/\r?\n$/, '');
          for (const line of text.split('\n')) s.out(`${node}: ${line.replace(/\r$/, '')}\n`);
        },
      );
    });
}
