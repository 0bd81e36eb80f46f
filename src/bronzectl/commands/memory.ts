// `bronzectl memory [-v] [--insecure]`: memory usage per node in MiB, as talosctl (USED = total - free - cache - buffers).
import type { Command } from 'commander';
import type { MemInfo } from '../../client/types.ts';
import type { Ctx } from '../session.ts';
import { table } from '../output.ts';

/** /proc/meminfo's names for the fields of machine.MemInfo, in its order (for --verbose). */
const MEMINFO_NAMES: ReadonlyArray<readonly [keyof MemInfo & string, string]> = [
  ['memtotal', 'MemTotal'], ['memfree', 'MemFree'], ['memavailable', 'MemAvailable'], ['buffers', 'Buffers'],
  ['cached', 'Cached'], ['swapcached', 'SwapCached'], ['active', 'Active'], ['inactive', 'Inactive'],
  ['activeanon', 'Active(anon)'], ['inactiveanon', 'Inactive(anon)'], ['activefile', 'Active(file)'],
  ['inactivefile', 'Inactive(file)'], ['unevictable', 'Unevictable'], ['mlocked', 'Mlocked'],
  ['swaptotal', 'SwapTotal'], ['swapfree', 'SwapFree'], ['dirty', 'Dirty'], ['writeback', 'Writeback'],
  ['anonpages', 'AnonPages'], ['mapped', 'Mapped'], ['shmem', 'Shmem'], ['slab', 'Slab'],
  ['sreclaimable', 'SReclaimable'], ['sunreclaim', 'SUnreclaim'], ['kernelstack', 'KernelStack'],
  ['pagetables', 'PageTables'], ['nfsunstable', 'NFS_Unstable'], ['bounce', 'Bounce'],
  ['writebacktmp', 'WritebackTmp'], ['commitlimit', 'CommitLimit'], ['committedas', 'Committed_AS'],
  ['vmalloctotal', 'VmallocTotal'], ['vmallocused', 'VmallocUsed'], ['vmallocchunk', 'VmallocChunk'],
  ['hardwarecorrupted', 'HardwareCorrupted'], ['anonhugepages', 'AnonHugePages'],
  ['shmemhugepages', 'ShmemHugePages'], ['shmempmdmapped', 'ShmemPmdMapped'], ['cmatotal', 'CmaTotal'],
  ['cmafree', 'CmaFree'], ['hugepagestotal', 'HugePages_Total'], ['hugepagesfree', 'HugePages_Free'],
  ['hugepagesrsvd', 'HugePages_Rsvd'], ['hugepagessurp', 'HugePages_Surp'], ['hugepagesize', 'Hugepagesize'],
  ['directmap4k', 'DirectMap4k'], ['directmap2m', 'DirectMap2M'], ['directmap1g', 'DirectMap1G'],
];

const HUGEPAGE_COUNTS = new Set(['hugepagestotal', 'hugepagesfree', 'hugepagesrsvd', 'hugepagessurp']);

export function register(program: Command, ctx: Ctx): void {
  program
    .command('memory')
    .alias('free')
    .description('Show memory usage')
    .option('-v, --verbose', 'display extended memory statistics')
    .option('-i, --insecure', 'use the insecure (encrypted with no auth) maintenance service')
    .action(async (opts: { verbose?: boolean; insecure?: boolean }) => {
      const s = ctx.session();
      s.insecure = !!opts.insecure;
      const replies = await s.fanOut((c, o) => c.machine.Memory({}, o));
      if (opts.verbose) {
        for (const { node, msg } of replies) {
          let out = `NODE: ${node}\n`;
          for (const [field, name] of MEMINFO_NAMES) {
            out += `${name}: ${msg.meminfo?.[field] ?? '0'}${HUGEPAGE_COUNTS.has(field) ? '' : ' kB'}\n`;
          }
          s.out(out + '\n');
        }
        return;
      }
      const rows = [['NODE', 'TOTAL', 'USED', 'FREE', 'SHARED', 'BUFFERS', 'CACHE', 'AVAILABLE']];
      for (const { node, msg } of replies) {
        const m = msg.meminfo;
        const n = (f: keyof MemInfo & string) => BigInt(m?.[f] ?? '0');
        const mib = (v: bigint) => String(v / 1024n);
        const used = n('memtotal') - n('memfree') - n('cached') - n('buffers');
        rows.push([node, mib(n('memtotal')), mib(used), mib(n('memfree')), mib(n('shmem')), mib(n('buffers')), mib(n('cached')), mib(n('memavailable'))]);
      }
      if (replies.length > 0) s.out(table(rows));
    });
}
