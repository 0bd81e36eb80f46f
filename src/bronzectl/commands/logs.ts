// `bronzectl logs <id> [-f] [--tail N] [-k | --namespace NS] [--insecure]`: a service's log, or
// a container's with -k or --namespace (`taloscontainers` for Bronze's containers), every line
// prefixed with its node as talosctl does. -f follows until Ctrl-C; --insecure reads a node in
// maintenance mode.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { intArg } from '../args.ts';
import { LineSlicer } from '../output.ts';
import { type NamespaceOptions, containerTarget, namespaceOptions } from './containers.ts';

/** The namespace of services' logs, as talosctl sends it. */
const SERVICES = 'system';

export function register(program: Command, ctx: Ctx): void {
  namespaceOptions(
    program
      .command('logs')
      .description('Retrieve logs for a service')
      .argument('<id>', 'service id (see `bronzectl services`), or a container id with -k / --namespace')
      .option('-f, --follow', 'specify if the logs should be streamed')
      .option('--tail <lines>', 'lines of log file to display (default is to show from the beginning)', intArg(-1), -1),
    SERVICES,
  )
    .option('-i, --insecure', 'use the insecure (encrypted with no auth) maintenance service')
    .action(async (id: string, opts: NamespaceOptions & { follow?: boolean; tail: number; insecure?: boolean }) => {
      const s = ctx.session();
      s.insecure = !!opts.insecure;
      const ns = containerTarget(opts, SERVICES);
      const lines = new LineSlicer((node, line) => s.out(`${node}: ${line}\n`));
      await s.streamFanOut(
        (c, o) => c.machine.Logs({ ...ns, id, follow: !!opts.follow, tail_lines: opts.tail }, o),
        (node, msg) => lines.push(node, msg.bytes),
      );
      lines.flush();
    });
}
