// `bronzectl health`: talosctl's cluster health checks, run from the client (--server=false):
// etcd healthy, its members consistent and the control planes, apid ready, every service Running
// and healthy, every node a member. The work is in health-impl.ts, imported when it runs.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { load } from '../lazy.ts';
import { listArg } from '../args.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('health')
    .description('Check cluster health')
    .option('--control-plane-nodes <list>', 'specify IPs of control plane nodes', listArg, [] as string[])
    .option('--worker-nodes <list>', 'specify IPs of worker nodes', listArg, [] as string[])
    .option('--wait-timeout <duration>', 'timeout to wait for the cluster to be ready', '20m')
    .action(async (opts: { controlPlaneNodes: string[]; workerNodes: string[]; waitTimeout: string }) => {
      await (await load('health')).health(ctx, opts);
    });
}
