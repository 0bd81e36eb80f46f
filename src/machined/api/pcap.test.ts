// PacketCapture on this host's loopback (as root: AF_PACKET needs CAP_NET_RAW): a program in
// tcpdump -dd form, attached with SO_ATTACH_FILTER, lets through UDP to one port and not to
// another; the stream is a pcap file that reads back; the kernel's refusal of a bad program and
// an unknown link are clear errors.
import dgram from 'node:dgram';
import { describe, expect, it } from 'vitest';
import { parseTcpdumpDd } from '../../contract/bpf.ts';
import { LINKTYPE_ETHERNET, PcapReader } from '../../lib/pcap.ts';
import { linkInfo, pcapHandlers } from './pcap.ts';
import { callStream, collect } from './testing.ts';
import { udpDstPort } from '../../../test/lib/bpf-programs.ts';

const isRoot = process.getuid?.() === 0;

describe.runIf(isRoot)('PacketCapture on lo', () => {
  it('captures what the filter lets through, as a pcap stream', async () => {
    const wanted = 40000 + Math.floor(Math.random() * 10000);
    const other = wanted + 1;
    const s = callStream<{ bytes: Buffer }>(pcapHandlers().PacketCapture, { interface: 'lo', bpf_filter: parseTcpdumpDd(udpDstPort(wanted)) });
    await s.waitFor(1); // the pcap header: the socket is bound
    const sock = dgram.createSocket('udp4');
    const send = (port: number, text: string) => new Promise<void>((r) => sock.send(Buffer.from(text), port, '127.0.0.1', () => r()));
    const reader = new PcapReader();
    const packets: Buffer[] = [];
    const deadline = Date.now() + 10_000;
    let seen = 0;
    while (!packets.some((p) => p.includes('wanted-3')) && Date.now() < deadline) {
      for (let i = 0; i < 4; i++) {
        await send(other, `other-${i}`);
        await send(wanted, `wanted-${i}`);
      }
      await new Promise((r) => setTimeout(r, 100));
      for (const m of s.messages.slice(seen)) packets.push(...reader.push(m.bytes).map((p) => p.data));
      seen = s.messages.length;
    }
    s.cancel();
    await s.done;
    sock.close();
    expect(s.error).toBeUndefined();
    expect(reader.header).toEqual({ snaplen: 65536, linktype: LINKTYPE_ETHERNET });
    expect(packets.some((p) => p.includes('wanted-0'))).toBe(true);
    expect(packets.some((p) => p.includes('other-'))).toBe(false);
    for (const p of packets) expect(p.readUInt16BE(14 + 20 + 2)).toBe(wanted); // UDP dst port (IPv4, no options)
  });

  it('refuses a program the kernel refuses, and an unknown link', async () => {
    // A jump past the end of the program.
    await expect(collect(pcapHandlers().PacketCapture, { interface: 'lo', bpf_filter: parseTcpdumpDd('{ 0x15, 9, 9, 0x00000800 },\n{ 0x6, 0, 0, 0x00000000 },') })).rejects.toMatchObject({
      code: 3,
      message: expect.stringMatching(/kernel refused the BPF filter/),
    });
    await expect(collect(pcapHandlers().PacketCapture, { interface: 'nosuchlink0' })).rejects.toMatchObject({ code: 5, message: 'link nosuchlink0 not found' });
    await expect(collect(pcapHandlers().PacketCapture, { interface: '../x' })).rejects.toMatchObject({ code: 3 });
    expect(linkInfo('lo').linktype).toBe(LINKTYPE_ETHERNET);
  });
});

describe('tcpdump -dd programs', () => {
  it('parse as talosctl parses them, and bad lines are named', () => {
    expect(parseTcpdumpDd(udpDstPort(53))[6]).toEqual({ op: 0x15, jt: 0, jf: 1, k: 53 });
    expect(parseTcpdumpDd('  \n{ 0x6, 0, 0, 0x00040000 },\n')).toEqual([{ op: 6, jt: 0, jf: 0, k: 0x40000 }]);
    expect(() => parseTcpdumpDd('{ 0x6, 0, 0, 0x0 },\nudp port 53')).toThrow(/line 2: "udp port 53" is not an instruction in tcpdump -dd form/);
    expect(() => parseTcpdumpDd('{ 0x6, 300, 0, 0x0 },')).toThrow(/out of range/);
  });
});
