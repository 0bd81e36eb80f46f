// One SNTP exchange (RFC 4330 section 5, RFC 5905's on-wire checks) and the sample filter.
//
// The request's transmit timestamp is 64 random bits, not the local time: the server echoes
// it as the origin timestamp, so a reply that does not carry it was not an answer to this
// request (an off-path spoofer would have to guess it), and the request does not reveal the
// local clock. t1 and t4 are read from the Clock, never from the packet.
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import net from 'node:net';
import type { Clock } from './clock.ts';
import {
  Leap,
  Mode,
  NTP_PORT,
  NtpDecodeError,
  type NtpTimestamp,
  clientRequest,
  decodePacket,
  isZero,
  kissCode,
  ntpToUnixMs,
  offsetAndDelay,
  timestampEquals,
} from './ntp.ts';

export type SntpErrorReason =
  | 'timeout'
  | 'origin-mismatch'
  | 'bad-mode'
  | 'bad-version'
  | 'unsynchronised'
  | 'bad-stratum'
  | 'zero-timestamp'
  | 'bad-times'
  | 'root-distance'
  | 'network';

export class SntpError extends Error {
  override name = 'SntpError';
  constructor(
    readonly reason: SntpErrorReason,
    message: string,
  ) {
    super(message);
  }
}

/** The server said stratum 0: its code (RATE: poll less often, DENY/RSTR: stop asking). */
export class KissOfDeathError extends Error {
  override name = 'KissOfDeathError';
  constructor(readonly code: string) {
    super(`kiss-o'-death ${JSON.stringify(code)}`);
  }
}

/** What one good reply tells. Times are Unix ms by the local clock being measured. */
export interface Measurement {
  offsetMs: number;
  delayMs: number;
  stratum: number;
  leap: number;
  /** Server's root delay and dispersion, ms. */
  rootDelayMs: number;
  rootDispersionMs: number;
  /** rootDelay/2 + rootDispersion + delay/2: how far off the server's time may be, seen from here. */
  rootDistanceMs: number;
  referenceId: number;
  /** Local time when the reply arrived (t4). */
  localMs: number;
  /** The server's time at that moment (t4 + offset). */
  remoteMs: number;
}

export interface Sample extends Measurement {
  /** The server as configured (a name or an address, maybe with a port). */
  server: string;
  /** The address actually queried. */
  address: string;
}

export interface CheckOptions {
  /** Replies whose root distance exceeds this are refused. Default 5 s (timesyncd's bound; RFC 5905's MAXDIST is 1.5 s). */
  maxRootDistanceMs?: number;
}

export const DEFAULT_MAX_ROOT_DISTANCE_MS = 5000;

/**
 * Checks a reply to the request whose transmit timestamp was `nonce`, sent at t1 and received
 * at t4 (local Unix ms), and computes offset and delay. Throws NtpDecodeError (not a packet),
 * SntpError (reason 'origin-mismatch': not an answer to this request, keep waiting; others: a
 * bad answer) or KissOfDeathError. Never throws anything else, whatever the bytes.
 */
export function checkReply(bytes: Uint8Array, nonce: NtpTimestamp, t1: number, t4: number, o: CheckOptions = {}): Measurement {
  const p = decodePacket(bytes);
  if (!timestampEquals(p.originTime, nonce)) throw new SntpError('origin-mismatch', 'reply does not answer our request (origin timestamp differs)');
  if (p.mode !== Mode.SERVER) throw new SntpError('bad-mode', `reply has mode ${p.mode}, want ${Mode.SERVER} (server)`);
  if (p.version < 1 || p.version > 4) throw new SntpError('bad-version', `reply has NTP version ${p.version}`);
  if (p.stratum === 0) throw new KissOfDeathError(kissCode(p.referenceId));
  if (p.leap === Leap.UNSYNC) throw new SntpError('unsynchronised', 'server is not synchronised (leap indicator 3)');
  if (p.stratum >= 16) throw new SntpError('bad-stratum', `server is not synchronised (stratum ${p.stratum})`);
  if (isZero(p.transmitTime)) throw new SntpError('zero-timestamp', 'reply has a zero transmit timestamp');
  if (isZero(p.receiveTime)) throw new SntpError('zero-timestamp', 'reply has a zero receive timestamp');
  const t2 = ntpToUnixMs(p.receiveTime);
  const t3 = ntpToUnixMs(p.transmitTime);
  if (!(t3 >= t2)) throw new SntpError('bad-times', 'server transmitted before it received');
  const { offsetMs, delayMs: rawDelay } = offsetAndDelay(t1, t2, t3, t4);
  // Clock granularity can make a near-zero delay slightly negative; more than that is nonsense.
  if (!(rawDelay > -1) || !Number.isFinite(offsetMs)) throw new SntpError('bad-times', `impossible round trip (delay ${rawDelay.toFixed(3)} ms)`);
  const delayMs = Math.max(0, rawDelay);
  const rootDelayMs = p.rootDelay * 1000;
  const rootDispersionMs = p.rootDispersion * 1000;
  const rootDistanceMs = rootDelayMs / 2 + rootDispersionMs + delayMs / 2;
  const max = o.maxRootDistanceMs ?? DEFAULT_MAX_ROOT_DISTANCE_MS;
  if (rootDistanceMs > max) throw new SntpError('root-distance', `server's root distance ${rootDistanceMs.toFixed(1)} ms exceeds ${max} ms`);
  return {
    offsetMs,
    delayMs,
    stratum: p.stratum,
    leap: p.leap,
    rootDelayMs,
    rootDispersionMs,
    rootDistanceMs,
    referenceId: p.referenceId,
    localMs: t4,
    remoteMs: t4 + offsetMs,
  };
}

/** 64 random bits, never zero (a zero transmit timestamp is invalid). */
export function randomNonce(): NtpTimestamp {
  for (;;) {
    const b = crypto.randomBytes(8);
    const t = { seconds: b.readUInt32BE(0), fraction: b.readUInt32BE(4) };
    if (!isZero(t)) return t;
  }
}

export interface QueryOptions extends CheckOptions {
  /** Default 2000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Sends one request to address:port and waits for the reply that answers it (others are
 * dropped), measured against `clock`. Rejects with SntpError, KissOfDeathError, or an abort.
 */
export function query(address: string, port: number, clock: Clock, o: QueryOptions = {}): Promise<Measurement> {
  const family = net.isIP(address);
  if (family === 0) return Promise.reject(new SntpError('network', `not an IP address: ${address}`));
  const timeoutMs = o.timeoutMs ?? 2000;
  return new Promise<Measurement>((resolve, reject) => {
    const sock = dgram.createSocket({ type: family === 6 ? 'udp6' : 'udp4' });
    const nonce = randomNonce();
    let t1 = 0;
    let done = false;
    let lastIgnored = '';
    const finish = (err: Error | undefined, m?: Measurement) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      try {
        sock.close();
      } catch {
        // already closed
      }
      if (err) reject(err);
      else resolve(m!);
    };
    const onAbort = () => finish(o.signal!.reason instanceof Error ? o.signal!.reason : new Error('aborted'));
    const timer = setTimeout(
      () => finish(new SntpError('timeout', `no reply from ${address}:${port} within ${timeoutMs} ms${lastIgnored ? ` (ignored: ${lastIgnored})` : ''}`)),
      timeoutMs,
    );
    if (o.signal?.aborted) return onAbort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    sock.on('error', (err) => finish(new SntpError('network', `${address}:${port}: ${err.message}`)));
    sock.on('message', (msg, rinfo) => {
      const t4 = clock.now();
      if (rinfo.port !== port || !sameAddress(rinfo.address, address)) return;
      try {
        finish(undefined, checkReply(msg, nonce, t1, t4, o));
      } catch (err) {
        if (err instanceof SntpError && err.reason === 'origin-mismatch') {
          lastIgnored = err.message;
          return;
        }
        if (err instanceof NtpDecodeError) {
          lastIgnored = err.message;
          return;
        }
        finish(err as Error);
      }
    });
    // A connected socket gets only this peer's datagrams, and ICMP port unreachable as an error.
    sock.connect(port, address, (err?: Error) => {
      if (err) return finish(new SntpError('network', `${address}:${port}: ${err.message}`));
      if (done) return;
      const req = clientRequest(nonce);
      t1 = clock.now();
      sock.send(req, (e) => {
        if (e) finish(new SntpError('network', `${address}:${port}: ${e.message}`));
      });
    });
  });
}

function sameAddress(a: string, b: string): boolean {
  if (a === b) return true;
  const strip = (s: string) => s.replace(/^::ffff:/i, '').replace(/%.*$/, '').toLowerCase();
  return strip(a) === strip(b);
}

// ---------------------------------------------------------------------------------------------
// Servers and selection.

export interface ServerAddress {
  host: string;
  port: number;
}

export class BadServerError extends Error {
  override name = 'BadServerError';
}

/** 'host', 'host:port', 'a.b.c.d', 'a.b.c.d:port', '::1', '[::1]', '[::1]:port'. */
export function parseServer(spec: string): ServerAddress {
  const s = spec.trim();
  if (s === '') throw new BadServerError('empty NTP server');
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (bracket) return { host: bracket[1]!, port: portOf(bracket[2], spec) };
  if (net.isIPv6(s)) return { host: s, port: NTP_PORT };
  const m = /^([^:\s]+)(?::(\d+))?$/.exec(s);
  if (!m) throw new BadServerError(`bad NTP server ${JSON.stringify(spec)}`);
  return { host: m[1]!, port: portOf(m[2], spec) };
}

function portOf(p: string | undefined, spec: string): number {
  if (p === undefined) return NTP_PORT;
  const n = Number(p);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new BadServerError(`bad port in NTP server ${JSON.stringify(spec)}`);
  return n;
}

/** The sample with the smallest round trip: the least disturbed by queueing (the SNTP clock filter). */
export function minDelaySample<T extends { delayMs: number }>(samples: readonly T[]): T | undefined {
  let best: T | undefined;
  for (const s of samples) if (!best || s.delayMs < best.delayMs) best = s;
  return best;
}

/** The best of one filtered sample per server: lowest stratum, then smallest root distance. */
export function selectBest<T extends { stratum: number; rootDistanceMs: number }>(candidates: readonly T[]): T | undefined {
  let best: T | undefined;
  for (const c of candidates) {
    if (!best || c.stratum < best.stratum || (c.stratum === best.stratum && c.rootDistanceMs < best.rootDistanceMs)) best = c;
  }
  return best;
}
