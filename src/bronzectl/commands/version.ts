// `bronzectl version [--client] [--short] [--insecure]`: talosctl's Client:/Server: layout.
import type { Command } from 'commander';
import { VERSION } from '../../version.ts';
import type { VersionInfo } from '../../client/types.ts';
import type { Ctx } from '../session.ts';

function goArch(arch: string): string {
  return arch === 'x64' ? 'amd64' : arch;
}

/** The long form, tab-indented, as talosctl prints it ("Go version" is the runtime: Node here). */
export function longVersion(v: Partial<VersionInfo>): string {
  return (
    `\tTag:         ${v.tag ?? ''}\n` +
    `\tSHA:         ${v.sha ?? ''}\n` +
    `\tBuilt:       ${v.built ?? ''}\n` +
    `\tRuntime:     ${v.go_version ? `node ${v.go_version}` : ''}\n` +
    `\tOS/Arch:     ${v.os ?? ''}/${v.arch ?? ''}\n`
  );
}

export function clientVersion(): VersionInfo {
  return { tag: VERSION.tag, sha: VERSION.sha, built: VERSION.built, go_version: process.version, os: process.platform, arch: goArch(process.arch) };
}

export function register(program: Command, ctx: Ctx): void {
  program
    .command('version')
    .description('Prints the version')
    .option('--client', 'print client version only')
    .option('--short', 'print the short version')
    .option('-i, --insecure', 'use Bronze maintenance mode API (no client certificate, no server verification)')
    .action(async (opts: { client?: boolean; short?: boolean; insecure?: boolean }) => {
      const out = (s: string) => ctx.io.stdout.write(s);
      out('Client:\n');
      out(opts.short ? `Bronze ${VERSION.tag}\n` : longVersion(clientVersion()));
      if (opts.client) return;
      const s = ctx.session();
      s.insecure = !!opts.insecure;
      const replies = await s.fanOut((c, o) => c.machine.Version({}, o));
      out('Server:\n');
      for (const { node, msg } of replies) {
        out(`\tNODE:        ${node}\n`);
        out(longVersion(msg.version ?? {}));
        out(`\tEnabled:     ${msg.features?.rbac ? 'RBAC' : ''}\n`);
      }
    });
}
