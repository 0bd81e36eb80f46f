// `bronzectl install --disk <path> [--wipe] [--image <url>] [--extra-kernel-arg <arg>...]`:
// installs Bronze to a disk of one node (what machine.install.disk does at boot), from the
// media the node booted from or from an upgrade image at a URL. Progress goes to stderr, the
// outcome to stdout; the node reboots into the disk once the stream ends without an error.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { followProgress } from '../progress.ts';

/** Repeatable, NOT split on commas: kernel arguments have commas of their own (console=ttyS0,115200). */
function repeat(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function register(program: Command, ctx: Ctx): void {
  program
    .command('install')
    .description('Install Bronze to a disk of the target node, then reboot into it')
    .requiredOption('--disk <path>', 'the whole disk to install to, e.g. /dev/vda or /dev/disk/by-id/...')
    .option('--wipe', 'install even though the disk holds data: everything on it is lost')
    .option('--image <url>', 'an upgrade image URL (http, https) to install from (default: the media the node booted from)')
    .option('--extra-kernel-arg <arg>', 'an extra kernel argument for the installed system (repeatable)', repeat, [])
    .action(async (opts: { disk: string; wipe?: boolean; image?: string; extraKernelArg: string[] }) => {
      const s = ctx.session();
      await followProgress(s, 'install', (c, o) =>
        c.machine.Install({ disk: opts.disk, wipe: !!opts.wipe, image: opts.image ?? '', extra_kernel_args: opts.extraKernelArg }, o),
      );
    });
}
