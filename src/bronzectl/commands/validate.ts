// `bronzectl validate -c/--config <file> [-m/--mode metal]`: validates a machine configuration file
// offline. Prints `<file> is valid for metal mode`, or every problem, one per line with its path and
// line, and exits 1. Warnings (Talos fields Bronze ignores or keeps for later) go to stderr either way. Bronze runs on metal (and virtual machines booted as metal) only, so metal is
// the one mode; talosctl's cloud and container modes are refused.
// node:fs rather than node:fs/promises, which would load when bronzectl starts (front.ts).
import fs from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import type { Ctx } from '../session.ts';
import { load } from '../lazy.ts';
import { UserError } from '../session.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('validate')
    .description('Validate config')
    .requiredOption('-c, --config <path>', 'the path of the config file')
    .addOption(new Option('-m, --mode <mode>', 'the mode to validate the config for').choices(['metal']).default('metal'))
    .action(async (opts: { config: string; mode: string }) => {
      let text: string;
      try {
        text = await fs.promises.readFile(path.resolve(ctx.io.cwd, opts.config), 'utf8');
      } catch (e) {
        throw new UserError(`${opts.config}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
      }
      const { configIssues, configWarnings, issuesText, warningsText } = await load('machineconfig');
      const issues = configIssues(text);
      const warnings = warningsText(configWarnings(text));
      if (issues.length > 0) throw new UserError(`${opts.config} is not valid for ${opts.mode} mode: ${issuesText(issues)}${warnings ? `\n${warnings.trimEnd()}` : ''}`);
      ctx.io.stderr.write(warnings);
      ctx.io.stdout.write(`${opts.config} is valid for ${opts.mode} mode\n`);
    });
}
