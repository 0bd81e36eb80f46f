// `bronzectl time [--check server]`: the node's clock next to its NTP server's, as talosctl.
import type { Command } from 'commander';
import { timestampToDate } from '../../client/types.ts';
import type { Ctx } from '../session.ts';
import { table } from '../output.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('time')
    .description('Gets current server time')
    .option('-c, --check <server>', 'checks server time against specified ntp server')
    .action(async (opts: { check?: string }) => {
      const s = ctx.session();
      const replies = await s.fanOut((c, o) => (opts.check ? c.time.TimeCheck({ server: opts.check }, o) : c.time.Time({}, o)));
      const iso = (d: Date | undefined) => d?.toISOString() ?? '';
      const rows = [['NODE', 'NTP-SERVER', 'NODE-TIME', 'NTP-SERVER-TIME']];
      for (const { node, msg } of replies) rows.push([node, msg.server, iso(timestampToDate(msg.localtime)), iso(timestampToDate(msg.remotetime))]);
      if (replies.length > 0) s.out(table(rows));
    });
}
