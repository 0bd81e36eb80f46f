// Dmesg: the kernel ring buffer, read from /dev/kmsg (nonblocking, from its start), one
// common.Data per record, formatted as Talos does:
//   `<facility>: <level, right-aligned in 7>: [<RFC 3339 time, ns>]: <message>`
// e.g. `kern:    info: [2024-05-01T10:00:00.123456Z]: Linux version 6.12 ...`.
// tail skips the records already in the buffer; follow keeps streaming new ones (polled, since
// a character device cannot be watched from Node) until the client cancels.

import fs from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type * as grpc from '@grpc/grpc-js';
import { serverStream, sleep, unavailable } from './common.ts';

export const FACILITIES = [
  'kern',
  'user',
  'mail',
  'daemon',
  'auth',
  'syslog',
  'lpr',
  'news',
  'uucp',
  'cron',
  'authpriv',
  'ftp',
  'ntp',
  'security',
  'console',
  'solaris-cron',
  'local0',
  'local1',
  'local2',
  'local3',
  'local4',
  'local5',
  'local6',
  'local7',
] as const;

export const LEVELS = ['emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug'] as const;

export interface KmsgRecord {
  facility: number;
  level: number;
  seq: number;
  /** Microseconds since boot. */
  usec: number;
  message: string;
}

/** One /dev/kmsg record line: `<prio>,<seq>,<usec>,<flags>[,...];<message>`. */
export function parseKmsgRecord(line: string): KmsgRecord | undefined {
  const semi = line.indexOf(';');
  if (semi === -1) return undefined;
  const [prio, seq, usec] = line.slice(0, semi).split(',').map(Number);
  if (!Number.isInteger(prio) || !Number.isInteger(seq) || !Number.isFinite(usec)) return undefined;
  return { facility: prio! >> 3, level: prio! & 7, seq: seq!, usec: usec!, message: line.slice(semi + 1) };
}

/**
 * The records in text read from kmsg (one record per read from the device; any number, and a
 * partial last line, from a regular file). Continuation lines (` KEY=value`) are skipped.
 * Returns the unparsed rest (an incomplete last line).
 */
export function parseKmsgChunk(text: string): { records: KmsgRecord[]; rest: string } {
  const lines = text.split('\n');
  const rest = lines.pop() ?? '';
  const records: KmsgRecord[] = [];
  for (const line of lines) {
    if (line === '' || line.startsWith(' ')) continue;
    const rec = parseKmsgRecord(line);
    if (rec) records.push(rec);
  }
  return { records, rest };
}

/** Go's RFC3339Nano: UTC, fraction to the nanosecond with trailing zeros dropped. */
export function rfc3339Nano(epochUsec: number): string {
  const us = Math.floor(epochUsec);
  const secs = Math.floor(us / 1e6);
  const frac = String((us - secs * 1e6) * 1000).padStart(9, '0').replace(/0+$/, '');
  const base = new Date(secs * 1000).toISOString().slice(0, 19);
  return `${base}${frac ? `.${frac}` : ''}Z`;
}

export function formatKmsgRecord(rec: KmsgRecord, bootTimeUsec: number): string {
  const facility = FACILITIES[rec.facility] ?? `facility${rec.facility}`;
  const level = LEVELS[rec.level] ?? `level${rec.level}`;
  return `${facility}: ${level.padStart(7)}: [${rfc3339Nano(bootTimeUsec + rec.usec)}]: ${rec.message}`;
}

/** Boot time in µs since the epoch, from /proc/uptime. */
export function bootTimeUsec(procRoot = '/proc', now = Date.now()): number {
  const uptime = Number(fs.readFileSync(path.join(procRoot, 'uptime'), 'utf8').split(/\s+/)[0]);
  return Math.round(now * 1000 - uptime * 1e6);
}

export interface KmsgReadOptions {
  follow: boolean;
  /** Skip what the buffer holds now. */
  tail: boolean;
  signal: AbortSignal;
  /** How often to look for new records when following. Default 200 ms. */
  pollMs?: number;
}

const READ_SIZE = 16 * 1024;
/** Records handed out per batch, so the event loop and the client get their turn. */
const BATCH = 256;

/**
 * Batches of records from a kmsg device (or a regular file in that format, for tests).
 * Throws an ApiError (UNAVAILABLE) naming the path when it cannot be opened.
 */
export async function* readKmsg(file: string, opts: KmsgReadOptions): AsyncGenerator<KmsgRecord[]> {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (err) {
    throw unavailable(`the kernel log cannot be read: ${file}: ${(err as Error).message}`);
  }
  const buf = Buffer.alloc(READ_SIZE);
  const decoder = new StringDecoder('utf8');
  let carry = '';
  /** Everything available now, up to BATCH records; [] when there is nothing new. */
  const readAvailable = (): KmsgRecord[] => {
    const out: KmsgRecord[] = [];
    while (out.length < BATCH) {
      let n: number;
      try {
        n = fs.readSync(fd, buf, 0, buf.length, null);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN' || code === 'EWOULDBLOCK') break; // nothing more for now
        if (code === 'EPIPE') continue; // records were overwritten before we read them: go on
        throw unavailable(`reading the kernel log ${file}: ${(err as Error).message}`);
      }
      if (n === 0) break; // end of a regular file
      const { records, rest } = parseKmsgChunk(carry + decoder.write(buf.subarray(0, n)));
      carry = rest;
      out.push(...records);
    }
    return out;
  };
  try {
    if (opts.tail) while (readAvailable().length > 0);
    for (;;) {
      if (opts.signal.aborted) return;
      const batch = readAvailable();
      if (batch.length > 0) {
        yield batch;
        continue;
      }
      if (!opts.follow) return;
      await sleep(opts.pollMs ?? 200, opts.signal);
    }
  } finally {
    fs.closeSync(fd);
  }
}

export interface DmesgOptions {
  /** Default '/dev/kmsg'. */
  kmsgPath?: string;
  /** Boot time in µs since the epoch; default from /proc/uptime. */
  bootTimeUsec?: () => number;
  pollMs?: number;
}

export function dmesgHandlers(opts: DmesgOptions = {}): Record<string, grpc.handleServerStreamingCall<any, any>> {
  const file = opts.kmsgPath ?? '/dev/kmsg';
  const boot = opts.bootTimeUsec ?? (() => bootTimeUsec());
  return {
    Dmesg: serverStream<{ follow?: boolean; tail?: boolean }, { bytes: Buffer }>(async (req, stream) => {
      const bootUs = boot();
      const records = readKmsg(file, { follow: !!req.follow, tail: !!req.tail, signal: stream.signal, pollMs: opts.pollMs });
      for await (const batch of records) {
        for (const rec of batch) await stream.send({ bytes: Buffer.from(formatKmsgRecord(rec, bootUs)) });
      }
    }),
  };
}
