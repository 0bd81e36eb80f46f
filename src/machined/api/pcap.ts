// PacketCapture (`bronzectl pcap`, talosctl's): packets on one link, captured with an
// AF_PACKET socket opened through koffi and streamed back as a pcap file in chunks of
// common.Data, until the caller ends the call. Both directions are captured. A classic BPF
// program in the request (tcpdump -dd, see src/contract/bpf.ts) is attached with
// SO_ATTACH_FILTER before the socket is bound, so nothing unfiltered is ever queued; the
// kernel checks it (INVALID_ARGUMENT when it refuses it). `promiscuous` adds the link's
// promiscuous membership for the life of the socket. Ethernet-framed links (and loopback)
// are captured as LINKTYPE_ETHERNET, links without a link-layer header (tun, WireGuard) as
// LINKTYPE_RAW. The socket is read on the poller's worker thread (src/lib/socket.ts), never on
// the event loop.
import fs from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { encodeSockFilter, type BpfInstruction } from '../../contract/bpf.ts';
import { initNative, koffi } from '../../lib/native.ts';
import { LINKTYPE_ETHERNET, LINKTYPE_RAW, pcapFileHeader, pcapRecord } from '../../lib/pcap.ts';
import { RawSocket, SOL_SOCKET, SocketClosedError } from '../../lib/socket.ts';
import { SyscallError } from '../../lib/sys.ts';
import { ApiError, invalidArgument, notFound, serverStream } from './common.ts';

const AF_PACKET = 17;
const SOCK_RAW = 3;
const ETH_P_ALL = 0x0003;
const SOL_PACKET = 263;
const PACKET_ADD_MEMBERSHIP = 1;
const PACKET_MR_PROMISC = 1;
const SO_ATTACH_FILTER = 26;
const ARPHRD_NONE = 0xfffe;

export const DEFAULT_SNAPLEN = 65536;
/** Packets gathered into one Data message at most. */
const BATCH = 64;

export interface PacketCaptureRequest {
  interface?: string;
  promiscuous?: boolean;
  snap_len?: number;
  bpf_filter?: BpfInstruction[];
}

/** struct sockaddr_ll bound to one link, all protocols. */
function sockaddrLl(ifindex: number): Buffer {
  const b = Buffer.alloc(20);
  b.writeUInt16LE(AF_PACKET, 0);
  b.writeUInt16BE(ETH_P_ALL, 2);
  b.writeInt32LE(ifindex, 4);
  return b;
}

/** SO_ATTACH_FILTER: a struct sock_fprog pointing at the program in memory koffi allocates. */
function attachFilter(sock: RawSocket, prog: readonly BpfInstruction[]): void {
  const code = encodeSockFilter(prog);
  const k = koffi();
  const mem = k.alloc('uint8_t', code.length);
  try {
    new Uint8Array(k.view(mem, code.length)).set(code);
    const fprog = Buffer.alloc(16);
    fprog.writeUInt16LE(prog.length, 0);
    fprog.writeBigUInt64LE(k.address(mem), 8);
    sock.setsockopt(SOL_SOCKET, SO_ATTACH_FILTER, fprog, 'setsockopt(SO_ATTACH_FILTER)');
  } finally {
    k.free(mem);
  }
}

/** The link's index and pcap link type, from sysfs. */
export function linkInfo(name: string, sysNet = '/sys/class/net'): { ifindex: number; linktype: number } {
  if (!/^[A-Za-z0-9_.:@-]{1,15}$/.test(name) || name === '.' || name === '..') throw invalidArgument(`${JSON.stringify(name)} is not a link name`);
  let ifindex: number;
  let type: number;
  try {
    ifindex = Number(fs.readFileSync(path.join(sysNet, name, 'ifindex'), 'utf8').trim());
    type = Number(fs.readFileSync(path.join(sysNet, name, 'type'), 'utf8').trim());
  } catch {
    throw notFound(`link ${name} not found`);
  }
  return { ifindex, linktype: type === ARPHRD_NONE ? LINKTYPE_RAW : LINKTYPE_ETHERNET };
}

function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export function pcapHandlers(opts: { sysNet?: string } = {}): Record<string, grpc.handleServerStreamingCall<any, any>> {
  return {
    PacketCapture: serverStream<PacketCaptureRequest, { bytes: Buffer }>(async (req, stream) => {
      if (!req.interface) throw invalidArgument('interface is required');
      const { ifindex, linktype } = linkInfo(req.interface, opts.sysNet);
      const snaplen = req.snap_len && req.snap_len > 0 ? Math.min(req.snap_len, 262144) : DEFAULT_SNAPLEN;
      await initNative();
      // Protocol 0: the socket receives nothing until bind names the protocols (after the filter).
      const sock = RawSocket.open(AF_PACKET, SOCK_RAW, 0, `packet(${req.interface})`);
      const stop = () => sock.close();
      stream.signal.addEventListener('abort', stop, { once: true });
      try {
        if (req.bpf_filter?.length) {
          try {
            attachFilter(sock, req.bpf_filter);
          } catch (err) {
            if (err instanceof SyscallError) throw invalidArgument(`the kernel refused the BPF filter (${err.message}): give a program compiled with tcpdump -dd`);
            throw invalidArgument(`bpf filter: ${(err as Error).message}`);
          }
        }
        sock.bind(sockaddrLl(ifindex));
        if (req.promiscuous) {
          const mreq = Buffer.alloc(16);
          mreq.writeInt32LE(ifindex, 0);
          mreq.writeUInt16LE(PACKET_MR_PROMISC, 4);
          sock.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP, mreq, 'setsockopt(PACKET_ADD_MEMBERSHIP)');
        }
        await stream.send({ bytes: pcapFileHeader(snaplen, linktype) });
        const buf = Buffer.alloc(snaplen);
        while (!stream.closed) {
          const first = await sock.recv(buf);
          const parts = [pcapRecord(nowMs(), first.data, first.length)];
          for (let i = 1; i < BATCH; i++) {
            const more = sock.tryRecv(buf);
            if (!more) break;
            parts.push(pcapRecord(nowMs(), more.data, more.length));
          }
          await stream.send({ bytes: Buffer.concat(parts) });
        }
      } catch (err) {
        if (err instanceof SocketClosedError && stream.closed) return; // the caller ended the capture
        if (err instanceof ApiError) throw err;
        if (err instanceof SyscallError) throw new ApiError(grpc.status.INTERNAL, `packet capture on ${req.interface}: ${err.message}`);
        throw err;
      } finally {
        stream.signal.removeEventListener('abort', stop);
        sock.close();
      }
    }),
  };
}
