// `bronzectl apply-config -f <file> [--insecure] [--mode auto|no-reboot|reboot|staged|try] [--dry-run]`:
// sends a machine configuration. With --insecure it talks to a node in maintenance mode (no
// client certificate, server not verified: the node has no identity yet), dialling each
// -n/--nodes address directly.
// node:fs rather than node:fs/promises, which would load when bronzectl starts (front.ts).
import fs from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import type { ApplyMode } from '../../client/types.ts';
import type { Ctx } from '../session.ts';
import { parseGoDuration } from '../output.ts';
import { UserError } from '../session.ts';

const MODES: Record<string, ApplyMode> = { auto: 'AUTO', 'no-reboot': 'NO_REBOOT', reboot: 'REBOOT', staged: 'STAGED', try: 'TRY' };

export function register(program: Command, ctx: Ctx): void {
  program
    .command('apply-config')
    .description('Apply a new configuration to a node')
    .requiredOption('-f, --file <path>', 'the filename of the updated configuration')
    .option('-i, --insecure', 'apply the config using the insecure (encrypted with no auth) maintenance service')
    .addOption(new Option('-m, --mode <mode>', 'apply config mode').choices(Object.keys(MODES)).default('auto'))
    .option('--dry-run', 'check how the config change will be applied in dry-run mode')
    .option('--timeout <duration>', 'the config will be rolled back after specified timeout (if try mode is selected)', '1m')
    .action(async (opts: { file: string; insecure?: boolean; mode: string; dryRun?: boolean; timeout: string }) => {
      const s = ctx.session();
      s.insecure = !!opts.insecure;
      let data: Buffer;
      try {
        data = await fs.promises.readFile(path.resolve(ctx.io.cwd, opts.file));
      } catch (e) {
        throw new UserError(`${opts.file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
      }
      let timeoutMs: number;
      try {
        timeoutMs = parseGoDuration(opts.timeout);
      } catch (e) {
        throw new UserError(`--timeout: ${(e as Error).message}`);
      }
      const replies = await s.fanOut((c, o) =>
        c.machine.applyConfiguration(
          {
            data,
            mode: MODES[opts.mode]!,
            dry_run: !!opts.dryRun,
            ...(opts.mode === 'try' ? { try_mode_timeout: { seconds: Math.floor(timeoutMs / 1000), nanos: (timeoutMs % 1000) * 1e6 } } : {}),
          },
          o,
        ),
      );
      for (const { node, msg } of replies) {
        for (const w of msg.warnings ?? []) s.warn(`${node}: warning: ${w}`);
        if (msg.mode_details) s.warn(`${node}: ${msg.mode_details}`);
      }
    });
}
