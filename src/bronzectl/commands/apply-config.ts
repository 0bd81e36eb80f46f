// `bronzectl apply-config -f <file> [--insecure] [--mode auto|no-reboot|reboot|staged|try] [--dry-run]`:
// sends a machine configuration. With --insecure it talks to a node in maintenance mode (no
// client certificate, server not verified: the node has no identity yet), dialling each
// -n/--nodes address directly.
// node:fs rather than node:fs/promises, which would load when bronzectl starts (front.ts).
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { UserError } from '../session.ts';
import { addApplyOptions, applyOptions, type ApplyFlags } from './machineconfig.ts';

export function register(program: Command, ctx: Ctx): void {
  addApplyOptions(
    program
      .command('apply-config')
      .description('Apply a new configuration to a node')
      .requiredOption('-f, --file <path>', 'the filename of the updated configuration')
      .option('-i, --insecure', 'apply the config using the insecure (encrypted with no auth) maintenance service'),
  ).action(async (opts: ApplyFlags & { file: string; insecure?: boolean }) => {
    const s = ctx.session();
    s.insecure = !!opts.insecure;
    let data: Buffer;
    try {
      data = await fs.promises.readFile(path.resolve(ctx.io.cwd, opts.file));
    } catch (e) {
      throw new UserError(`${opts.file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
    }
    const options = applyOptions(opts);
    const replies = await s.fanOut((c, o) => c.machine.ApplyConfiguration({ data, ...options }, o));
    for (const { node, msg } of replies) {
      for (const w of msg.warnings ?? []) s.warn(`${node}: warning: ${w}`);
      if (msg.mode_details) s.warn(`${node}: ${msg.mode_details}`);
    }
  });
}
