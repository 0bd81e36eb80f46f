// `bronzectl cluster create|show|destroy`: a local cluster of Bronze nodes under QEMU, as
// talosctl's `cluster` commands make one with its qemu provisioner (run as root: it makes a
// network namespace and tap devices). The work is in cluster-impl.ts, imported when it runs.
import { Option, type Command } from 'commander';
import type { Ctx } from '../session.ts';
import { load } from '../lazy.ts';
import { intArg } from '../args.ts';

/** Where clusters are kept; talosctl's --state (~/.talos/clusters), Bronze's way. */
const stateDir = (ctx: Ctx) => `${ctx.io.env.HOME || '/root'}/.bronze/clusters`;

export function register(program: Command, ctx: Ctx): void {
  const cluster = program.command('cluster').description('A local Bronze cluster for testing: QEMU nodes on a private network');
  const common = (c: Command) =>
    c
      .option('--name <name>', 'the name of the cluster', 'bronze-default')
      .option('--state <path>', 'directory path to store cluster state', stateDir(ctx));

  common(cluster.command('create').description('Creates a local QEMU-based cluster'))
    .option('--controlplanes <n>', 'the number of controlplanes to create', intArg(1), 1)
    .option('--workers <n>', 'the number of workers to create', intArg(0), 1)
    .addOption(new Option('--wait', 'wait for the cluster to be healthy').default(true))
    .addOption(new Option('--no-wait', 'return once etcd is bootstrapped, without waiting for health'))
    .option('--wait-timeout <duration>', 'timeout to wait for the cluster to be ready', '20m')
    .option('--memory <MiB>', 'the limit on memory usage in MB (each node)', intArg(288), 512)
    .option('--cpus <n>', 'the number of CPUs (each node)', intArg(1), 2)
    .option('--cidr <cidr>', 'CIDR of the cluster network', '10.5.0.0/24')
    .option('--arch <arch>', 'cluster architecture', 'amd64')
    .option('--vmlinuz-path <path>', 'the compressed kernel image to use (default _out/<arch>/vmlinuz)')
    .option('--initrd-path <path>', 'initramfs image to use (default beside the kernel)')
    .action(async (opts) => {
      await (await load('cluster')).create(ctx, opts);
    });

  common(cluster.command('show').description('Shows info about a local provisioned cluster')).action(async (opts) => {
    await (await load('cluster')).show(ctx, opts);
  });

  common(cluster.command('destroy').description('Destroys a local provisioned cluster')).action(async (opts) => {
    await (await load('cluster')).destroy(ctx, opts);
  });
}
