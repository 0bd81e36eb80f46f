// Kernel uevents: parsing the messages the kernel multicasts on NETLINK_KOBJECT_UEVENT (group 1).
// The KEY=VALUE files under /sys that coldplug reads are parsed in src/disk/uevent-file.ts.
//
// A kernel message is `ACTION@DEVPATH\0KEY=VALUE\0KEY=VALUE\0...`. Messages udev daemons
// re-broadcast (group 2) start with "libudev" and a binary header; they are ignored, as is
// anything malformed (counted, never thrown).

import { UEVENT_KEY as KEY_RE } from '../disk/uevent-file.ts';

export type UeventAction = 'add' | 'remove' | 'change' | 'move' | 'online' | 'offline' | 'bind' | 'unbind';

const ACTIONS: ReadonlySet<string> = new Set(['add', 'remove', 'change', 'move', 'online', 'offline', 'bind', 'unbind']);

export interface Uevent {
  action: UeventAction;
  /** Under /sys, e.g. '/devices/virtual/block/loop0'. */
  devpath: string;
  subsystem: string;
  /** Every KEY=VALUE, ACTION, DEVPATH and SUBSYSTEM included. */
  env: Record<string, string>;
  /** The kernel's sequence number; undefined for events read from /sys. */
  seqnum?: bigint;
}

export type ParseResult = { kind: 'event'; event: Uevent } | { kind: 'libudev' } | { kind: 'malformed'; reason: string };

/** Kernel messages are at most UEVENT_BUFFER_SIZE (2048) bytes; allow room. */
export const MAX_UEVENT_SIZE = 16384;


export function parseUevent(msg: Buffer): ParseResult {
  if (msg.length >= 8 && msg.subarray(0, 8).toString('latin1') === 'libudev\0') return { kind: 'libudev' };
  if (msg.length === 0) return { kind: 'malformed', reason: 'empty' };
  if (msg.length > MAX_UEVENT_SIZE) return { kind: 'malformed', reason: 'too long' };
  const headerEnd = msg.indexOf(0);
  if (headerEnd < 0) return { kind: 'malformed', reason: 'header not terminated' };
  const header = msg.subarray(0, headerEnd).toString('utf8');
  const at = header.indexOf('@');
  if (at < 0) return { kind: 'malformed', reason: 'no @ in header' };
  const action = header.slice(0, at);
  const devpath = header.slice(at + 1);
  if (!ACTIONS.has(action)) return { kind: 'malformed', reason: `unknown action ${JSON.stringify(action.slice(0, 32))}` };
  if (!isDevpath(devpath)) return { kind: 'malformed', reason: 'bad devpath' };

  const env: Record<string, string> = Object.create(null);
  let pos = headerEnd + 1;
  while (pos < msg.length) {
    const end = msg.indexOf(0, pos);
    if (end < 0) {
      // The kernel NUL-terminates every field; an unterminated tail means a truncated message.
      return { kind: 'malformed', reason: 'field not terminated' };
    }
    if (end === pos) {
      pos = end + 1; // tolerate padding
      continue;
    }
    const field = msg.subarray(pos, end).toString('utf8');
    const eq = field.indexOf('=');
    if (eq <= 0) return { kind: 'malformed', reason: 'field without key' };
    const key = field.slice(0, eq);
    if (!KEY_RE.test(key)) return { kind: 'malformed', reason: 'bad key' };
    env[key] = field.slice(eq + 1);
    pos = end + 1;
  }
  if (env.ACTION !== action) return { kind: 'malformed', reason: 'ACTION differs from header' };
  if (env.DEVPATH !== devpath) return { kind: 'malformed', reason: 'DEVPATH differs from header' };
  const subsystem = env.SUBSYSTEM;
  if (!subsystem) return { kind: 'malformed', reason: 'no SUBSYSTEM' };
  let seqnum: bigint | undefined;
  if (env.SEQNUM !== undefined) {
    if (!/^[0-9]{1,20}$/.test(env.SEQNUM)) return { kind: 'malformed', reason: 'bad SEQNUM' };
    seqnum = BigInt(env.SEQNUM);
  }
  const ev: Uevent = { action: action as UeventAction, devpath, subsystem, env: { ...env } };
  if (seqnum !== undefined) ev.seqnum = seqnum;
  return { kind: 'event', event: ev };
}

function isDevpath(p: string): boolean {
  return p.length > 1 && p.startsWith('/') && !p.includes('\0') && !p.split('/').some((c) => c === '..' || c === '.');
}

/** Builds a kernel-format message (tests, and the fuzz corpus). */
export function formatUevent(action: string, devpath: string, env: Record<string, string>): Buffer {
  const fields = [`${action}@${devpath}`, `ACTION=${action}`, `DEVPATH=${devpath}`, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)];
  return Buffer.from(fields.map((f) => `${f}\0`).join(''), 'utf8');
}

/** Counters udevd keeps about what it received. */
export interface UeventStats {
  received: number;
  malformed: number;
  libudev: number;
  /** Events of subsystems udevd does not handle. */
  ignored: number;
  /** Times the socket overflowed (ENOBUFS) and udevd rescanned /sys. */
  overflows: number;
}

export function emptyStats(): UeventStats {
  return { received: 0, malformed: 0, libudev: 0, ignored: 0, overflows: 0 };
}
