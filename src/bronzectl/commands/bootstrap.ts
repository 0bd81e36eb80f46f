// `bronzectl bootstrap [--recover-from <snapshot>]`: starts etcd's cluster on one control plane
// (MachineService.Bootstrap, talosctl's command); with --recover-from, the snapshot is uploaded
// first (EtcdRecover) and the new cluster starts from its data. A second bootstrap is refused by
// the node, which says why.
import fs from 'node:fs';
import type { Command } from 'commander';
import type { NodeMetadata } from '../../client/types.ts';
import type { Ctx } from '../session.ts';
import { UserError } from '../session.ts';

export function register(program: Command, ctx: Ctx): void {
  program
    .command('bootstrap')
    .description('Bootstrap the etcd cluster on the specified node')
    .option('--recover-from <path>', 'recover etcd cluster from the snapshot')
    .option('--recover-skip-hash-check', 'skip integrity check when recovering etcd (use when recovering from data directory copy)')
    .action(async (opts: { recoverFrom?: string; recoverSkipHashCheck?: boolean }) => {
      const s = ctx.session();
      if ((await s.nodes()).length > 1) throw new UserError('"bootstrap" command is not supported with multiple nodes');
      if (opts.recoverFrom) {
        let size: number;
        try {
          size = fs.statSync(opts.recoverFrom).size;
        } catch (e) {
          throw new UserError(`--recover-from ${opts.recoverFrom}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
        }
        if (size === 0) throw new UserError(`--recover-from ${opts.recoverFrom}: the file is empty`);
        const file = opts.recoverFrom;
        // A client stream: the snapshot's chunks, then the node's one reply.
        const uploaded = await s.fanOut(async (c, o) => {
          async function* requests(): AsyncGenerator<{ bytes: Buffer }> {
            for await (const bytes of fs.createReadStream(file, { highWaterMark: 64 * 1024 }) as AsyncIterable<Buffer>) yield { bytes };
          }
          let reply: { messages: Array<{ metadata: NodeMetadata | null }> } = { messages: [] };
          for await (const r of c.machine.EtcdRecover(requests(), o)) reply = r;
          return reply;
        });
        if (uploaded.length === 0) return; // the node said why (printed)
      }
      await s.fanOut((c, o) => c.machine.Bootstrap({ recover_etcd: Boolean(opts.recoverFrom), recover_skip_hash_check: Boolean(opts.recoverSkipHashCheck) }, o));
    });
}
