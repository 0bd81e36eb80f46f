// `bronzectl containers [-k] [--namespace NS]` (alias c): talosctl's command for the containers of
// a containerd namespace, with talosctl's columns. Bronze's own containers (ContainerConfig) are
// in `taloscontainers`, which is the default here; talosctl's -k reads `k8s.io` through the CRI
// driver, and --namespace (Bronze's) names any other (`system`).
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { table } from '../output.ts';
import { CONTAINERS_NAMESPACE } from '../../containerd/types.ts';

export interface NamespaceOptions {
  kubernetes?: boolean;
  namespace?: string;
}

/** The namespace and driver a command's -k / --namespace select (default: `fallback`). */
export function containerTarget(opts: NamespaceOptions, fallback = CONTAINERS_NAMESPACE): { namespace: string; driver: 'CRI' | 'CONTAINERD' } {
  if (opts.kubernetes) return { namespace: 'k8s.io', driver: 'CRI' };
  return { namespace: opts.namespace ?? fallback, driver: 'CONTAINERD' };
}

/** The -k and --namespace options, shared by containers, stats, logs and restart. */
export function namespaceOptions(cmd: Command, fallback = CONTAINERS_NAMESPACE): Command {
  return cmd
    .option('-k, --kubernetes', 'use the k8s.io containerd namespace')
    .option('--namespace <namespace>', `containerd namespace (default "${fallback}")`);
}

/** talosctl's ID column: a container in another's pod is drawn under it. */
export function displayId(c: { id: string; pod_id: string }): string {
  return c.id !== c.pod_id && c.pod_id !== '' ? `└─ ${c.id}` : c.id;
}

export function register(program: Command, ctx: Ctx): void {
  namespaceOptions(program.command('containers').alias('c').description('List containers')).action(async (opts: NamespaceOptions) => {
    const s = ctx.session();
    const req = containerTarget(opts);
    const replies = await s.fanOut((c, o) => c.machine.Containers(req, o));
    const rows = [['NODE', 'NAMESPACE', 'ID', 'IMAGE', 'PID', 'STATUS']];
    // In the node's order: by id (src/machined/api/containers.ts).
    for (const { node, msg } of replies) {
      for (const c of msg.containers ?? []) rows.push([node, c.namespace, displayId(c), c.image, String(c.pid), c.status]);
    }
    if (replies.length === 0) return;
    s.out(table(rows));
  });
}
