// Netstat (`bronzectl netstat`, talosctl's): the sockets of /proc/net/{tcp,tcp6,udp,udp6,
// udplite,udplite6,raw,raw6} of the host's network namespace, as Talos reports them:
// LISTENING are the sockets with no remote end (address unspecified and port 0), CONNECTED
// the others; `pid` adds the process owning each socket (found through /proc/<pid>/fd).
// Bronze runs no containers, so the host is the only network namespace: asking for another
// by name is NOT_FOUND, and "all namespaces" is the host's.
import fs from 'node:fs';
import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { goIpString } from '../../lib/ip.ts';
import type { ConnectRecord as WireConnectRecord } from '../../contract/wire/machine/ConnectRecord.ts';
import type { NetstatRequest } from '../../contract/wire/machine/NetstatRequest.ts';
import { notFound, unary } from './common.ts';

export const L4PROTOS = ['tcp', 'tcp6', 'udp', 'udp6', 'udplite', 'udplite6', 'raw', 'raw6'] as const;

/** machine.ConnectRecord.State by the kernel's st (they share numbers: 1 ESTABLISHED ... 11 CLOSING). */
const STATES = ['RESERVED', 'ESTABLISHED', 'SYN_SENT', 'SYN_RECV', 'FIN_WAIT1', 'FIN_WAIT2', 'TIME_WAIT', 'CLOSE', 'CLOSEWAIT', 'LASTACK', 'LISTEN', 'CLOSING'] as const;
const TIMERS = ['OFF', 'ON', 'KEEPALIVE', 'TIMEWAIT', 'PROBE'] as const;

/**
 * A record as parsed: machine.ConnectRecord (its generated type, so the wire decides the fields),
 * with the ones netstat filters and joins on known to be set.
 */
export type ConnectRecord = WireConnectRecord & { localip: string; localport: number; remoteip: string; remoteport: number; inode: number; process: { pid: number; name: string } };

/** "0100007F" → 127.0.0.1; 32 hex digits → an IPv6 address (four little-endian words), as Go prints it. */
export function procNetAddress(hex: string): string {
  const words: number[] = [];
  for (let i = 0; i < hex.length; i += 8) words.push(parseInt(hex.slice(i, i + 8), 16));
  const bytes = Buffer.alloc(words.length * 4);
  words.forEach((w, i) => bytes.writeUInt32LE(w >>> 0, i * 4));
  return goIpString(bytes);
}

function unspecified(ip: string): boolean {
  return ip === '0.0.0.0' || ip === '::';
}

/** The records of one /proc/net table. */
export function parseProcNet(text: string, l4proto: string): ConnectRecord[] {
  const out: ConnectRecord[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 12) continue;
    const [localip, localport] = f[1]!.split(':');
    const [remoteip, remoteport] = f[2]!.split(':');
    const [tx, rx] = f[4]!.split(':');
    const [tr, when] = f[5]!.split(':');
    out.push({
      l4proto,
      localip: procNetAddress(localip!),
      localport: parseInt(localport!, 16),
      remoteip: procNetAddress(remoteip!),
      remoteport: parseInt(remoteport!, 16),
      state: STATES[parseInt(f[3]!, 16)] ?? 'RESERVED',
      txqueue: parseInt(tx!, 16),
      rxqueue: parseInt(rx!, 16),
      tr: TIMERS[parseInt(tr!, 16)] ?? 'OFF',
      timerwhen: parseInt(when!, 16),
      retrnsmt: parseInt(f[6]!, 16),
      uid: Number(f[7]),
      timeout: Number(f[8]),
      inode: Number(f[9]),
      ref: Number(f[10]),
      pointer: BigInt(`0x${f[11]}`).toString(),
      process: { pid: 0, name: '' },
      netns: '',
    });
  }
  return out;
}

/** socket inode → the process holding it, from /proc/<pid>/fd links ("socket:[inode]"). */
export function socketOwners(procRoot = '/proc'): Map<number, { pid: number; name: string }> {
  const owners = new Map<number, { pid: number; name: string }>();
  let pids: string[];
  try {
    pids = fs.readdirSync(procRoot).filter((n) => /^\d+$/.test(n));
  } catch {
    return owners;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = fs.readdirSync(path.join(procRoot, pid, 'fd'));
    } catch {
      continue; // gone, or not ours to read
    }
    let name: string | undefined;
    for (const fd of fds) {
      let link: string;
      try {
        link = fs.readlinkSync(path.join(procRoot, pid, 'fd', fd));
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (!m) continue;
      name ??= (() => {
        try {
          return fs.readFileSync(path.join(procRoot, pid, 'comm'), 'utf8').trim();
        } catch {
          return '';
        }
      })();
      owners.set(Number(m[1]), { pid: Number(pid), name });
    }
  }
  return owners;
}

export function netstat(req: NetstatRequest, procRoot = '/proc'): ConnectRecord[] {
  const names = req.netns?.netns ?? [];
  if (names.length) throw notFound(`network namespace ${names.join(', ')} not found: a Bronze node runs no containers, the host's is its only one`);
  if (!req.netns?.hostnetwork && !req.netns?.allnetns) return [];
  const filter = req.filter === 1 || req.filter === 'CONNECTED' ? 'CONNECTED' : req.filter === 2 || req.filter === 'LISTENING' ? 'LISTENING' : 'ALL';
  let records: ConnectRecord[] = [];
  for (const proto of L4PROTOS) {
    if (!req.l4proto?.[proto]) continue;
    let text: string;
    try {
      text = fs.readFileSync(path.join(procRoot, 'net', proto), 'utf8');
    } catch {
      continue; // e.g. no IPv6 in this kernel
    }
    records.push(...parseProcNet(text, proto));
  }
  records = records.filter((r) => {
    const listening = unspecified(r.remoteip) && r.remoteport === 0;
    return filter === 'ALL' || (filter === 'LISTENING' ? listening : !unspecified(r.remoteip) && r.remoteport !== 0);
  });
  if (req.feature?.pid) {
    const owners = socketOwners(procRoot);
    for (const r of records) r.process = owners.get(r.inode) ?? r.process;
  }
  return records;
}

export function netstatHandlers(opts: { procRoot?: string } = {}): Record<string, grpc.handleUnaryCall<any, any>> {
  return {
    Netstat: unary((req: NetstatRequest) => ({ messages: [{ connectrecord: netstat(req, opts.procRoot) }] })),
  };
}
