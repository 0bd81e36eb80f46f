// `bronzectl read <path>`: a file's contents from one node, raw on stdout.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { UserError } from '../session.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('read')
    .alias('cat')
    .description('Read a file on the machine')
    .argument('<path>', 'absolute path of the file')
    .action(async (path: string) => {
      const s = ctx.session();
      const targets = await s.nodes();
      if (targets.length > 1) throw new UserError('"read" command is not supported with multiple nodes');
      await s.streamFanOut(
        (c, o) => c.machine.Read({ path: path }, o),
        (_node, msg) => {
          if (msg.bytes?.length) s.out(msg.bytes);
        },
      );
    });
}
