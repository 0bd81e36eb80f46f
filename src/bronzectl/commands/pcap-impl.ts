// The work of `bronzectl pcap` (commands/pcap.ts), imported when the command runs.
import fs from 'node:fs';
import { parseTcpdumpDd } from '../../contract/bpf.ts';
import { PcapReader } from '../../lib/pcap.ts';
import type { Ctx } from '../session.ts';
import { parseGoDuration } from '../output.ts';
import { describePacket } from '../packets.ts';
import { UserError } from '../session.ts';
import type { PcapFlags as Flags } from './pcap.ts';

// What commands get from `load('pcap')` (lazy.ts): named here, not in lazy.ts, so that lazy.ts
// names no command file (the commands import it: that would be an import circle).
declare module '../lazy.ts' {
  interface LazyModules {
    pcap: {
      pcap: typeof pcap;
    };
  }
}

export async function pcap(ctx: Ctx, f: Flags): Promise<void> {
  const s = ctx.session();
  const targets = await s.nodes();
  if (targets.length > 1) throw new UserError('"pcap" command is not supported with multiple nodes');
  let bpf;
  try {
    bpf = f.bpfFilter ? parseTcpdumpDd(f.bpfFilter) : [];
  } catch (err) {
    throw new UserError((err as Error).message);
  }
  let durationMs = 0;
  if (f.duration !== undefined) {
    try {
      durationMs = parseGoDuration(f.duration);
    } catch (err) {
      throw new UserError(`--duration: ${(err as Error).message}`);
    }
  }
  const file = f.output && f.output !== '-' ? fs.createWriteStream(f.output) : undefined;
  const reader = new PcapReader();
  const stop = new AbortController();
  const timer = durationMs > 0 ? setTimeout(() => stop.abort(), durationMs) : undefined;
  s.signal?.addEventListener('abort', () => stop.abort(), { once: true });
  try {
    await s.streamFanOut(
      (c, o) => c.machine.PacketCapture({ interface: f.interface, promiscuous: !!f.promiscuous, ...(f.snaplen ? { snap_len: f.snaplen } : {}), bpf_filter: bpf }, { ...o, signal: stop.signal }),
      (_node, msg) => {
        if (!msg.bytes?.length) return;
        if (file) file.write(msg.bytes);
        else if (f.output === '-') s.out(msg.bytes);
        else for (const p of reader.push(msg.bytes)) s.out(`${describePacket(p, reader.header!.linktype)}\n`);
      },
    );
  } finally {
    clearTimeout(timer);
    if (file) await new Promise<void>((r) => file.end(() => r()));
  }
}
