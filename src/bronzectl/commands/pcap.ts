// `bronzectl pcap` (alias tcpdump): a packet capture on one node's link, with talosctl's
// flags. The node streams a pcap file: -o FILE writes it, -o - writes it to stdout (for
// `| tcpdump -r -`), no -o prints a line per packet. --bpf-filter takes a program as talosctl
// does, in `tcpdump -dd` form: `--bpf-filter "$(tcpdump -dd -y EN10MB 'icmp')"` (Bronze, like
// talosctl, compiles no filter expressions itself). --duration ends the capture after that
// long; Ctrl-C ends it too.
// The work itself is in pcap-impl.ts, imported when the command runs.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { intArg } from '../args.ts';
import { load } from '../lazy.ts';

export interface PcapFlags {
  interface: string;
  promiscuous?: boolean;
  snaplen?: number;
  output?: string;
  bpfFilter?: string;
  duration?: string;
}

export function register(program: Command, ctx: Ctx): void {
  program
    .command('pcap')
    .alias('tcpdump')
    .description('Capture the network packets from the node.')
    .option('-i, --interface <name>', 'interface name to capture packets on', 'eth0')
    .option('--promiscuous', 'put interface into promiscuous mode')
    .option('-s, --snaplen <bytes>', 'maximum packet size to capture', intArg(1))
    .option('-o, --output <file>', "if not set, decode packets to stdout; if set write raw pcap data to a file, use '-' for stdout")
    .option('--bpf-filter <program>', 'bpf filter to apply, tcpdump -dd format')
    .option('--duration <duration>', 'duration of the capture')
    .action(async (f: PcapFlags) => {
      await (await load('pcap')).pcap(ctx, f);
    });
}
