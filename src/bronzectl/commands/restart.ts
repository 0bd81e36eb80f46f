// `bronzectl restart <id> [-k] [--namespace NS]`: talosctl's restart of a container (a new
// instance of it), in `taloscontainers` unless -k / --namespace say otherwise. Services are
// restarted with `bronzectl service <id> restart`. Prints nothing on success.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { type NamespaceOptions, namespaceOptions, containerTarget } from './containers.ts';

export function register(program: Command, ctx: Ctx): void {
  namespaceOptions(program.command('restart').description('Restart a container').argument('<id>', 'container id (see `bronzectl containers`)')).action(
    async (id: string, opts: NamespaceOptions) => {
      const s = ctx.session();
      await s.fanOut((c, o) => c.machine.Restart({ ...containerTarget(opts), id }, o));
    },
  );
}
