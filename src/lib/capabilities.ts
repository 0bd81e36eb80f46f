// Linux capabilities for the daemons machined starts under their own users (lib/daemon-users.ts).
//
// How a daemon gets its capabilities: Node's spawn changes the child's uid and gid (libuv:
// setgroups(0), setgid, setuid, in the forked child before execve), which clears every
// capability of a child that was root; a non-root process then has none after execve, unless
// they are ambient. So machined's main thread (the one that forks) holds, for the one
// synchronous spawn, the capability in its inheritable and ambient sets and
// SECBIT_NO_SETUID_FIXUP (so the child's setuid keeps the ambient set), and puts all three back
// right after. The daemon starts with exactly those capabilities (permitted = effective =
// ambient), never as root, and cannot gain others. A daemon dropping root itself at start was
// not chosen: its runtime and code would run as root first, and Node's threads (V8's workers)
// would each keep the permitted set, since capabilities are per thread.
//
// Everything here acts on the calling thread only (capget/capset, prctl), which is the main
// thread in Node.
import fs from 'node:fs';
import { CAPABILITY_NAMES } from './capability-names.ts';
import { koffi } from './native.ts';
import { checkSyscall, prctl } from './sys.ts';

/** Capability numbers (linux/capability.h) by name (lib/capability-names.ts). */
export const CAPABILITIES: Readonly<Record<string, number>> = Object.freeze(Object.fromEntries(CAPABILITY_NAMES.map((name, number) => [name, number])));

const LINUX_CAPABILITY_VERSION_3 = 0x20080522;
const PR_GET_SECUREBITS = 27;
const PR_SET_SECUREBITS = 28;
const PR_CAP_AMBIENT = 47;
const PR_CAP_AMBIENT_RAISE = 2;
const PR_CAP_AMBIENT_CLEAR_ALL = 4;
export const SECBIT_NO_SETUID_FIXUP = 1 << 2;

/** The bit mask of capability names; throws on an unknown one. */
export function capabilityMask(names: readonly string[]): bigint {
  let mask = 0n;
  for (const n of names) {
    const bit = CAPABILITIES[n];
    if (bit === undefined) throw new Error(`unknown capability ${JSON.stringify(n)} (known: ${Object.keys(CAPABILITIES).join(', ')})`);
    mask |= 1n << BigInt(bit);
  }
  return mask;
}

interface CapLibc {
  capget: (hdr: Buffer, data: Buffer) => number;
  capset: (hdr: Buffer, data: Buffer) => number;
}

let bound: CapLibc | undefined;
function lib(): CapLibc {
  if (bound) return bound;
  const c = koffi().load('libc.so.6');
  bound = {
    capget: c.func('int capget(void *hdr, void *data)'),
    capset: c.func('int capset(void *hdr, void *data)'),
  };
  return bound;
}


export interface CapSets {
  effective: bigint;
  permitted: bigint;
  inheritable: bigint;
}

function header(): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt32LE(LINUX_CAPABILITY_VERSION_3, 0);
  h.writeInt32LE(0, 4); // the calling thread
  return h;
}

/** The calling thread's capability sets. */
export function getCapabilities(): CapSets {
  const data = Buffer.alloc(24);
  checkSyscall('capget', lib().capget(header(), data));
  const at = (field: number) => BigInt(data.readUInt32LE(field)) | (BigInt(data.readUInt32LE(12 + field)) << 32n);
  return { effective: at(0), permitted: at(4), inheritable: at(8) };
}

/** Sets the calling thread's capability sets. */
export function setCapabilities(s: CapSets): void {
  const data = Buffer.alloc(24);
  const put = (field: number, v: bigint) => {
    data.writeUInt32LE(Number(v & 0xffffffffn), field);
    data.writeUInt32LE(Number((v >> 32n) & 0xffffffffn), 12 + field);
  };
  put(0, s.effective);
  put(4, s.permitted);
  put(8, s.inheritable);
  checkSyscall('capset', lib().capset(header(), data));
}

function securebits(): number {
  return prctl('prctl(PR_GET_SECUREBITS)', PR_GET_SECUREBITS);
}

let poisoned: string | undefined;

/**
 * Runs `spawn` (synchronous: it forks the child) with `names` in the calling thread's inheritable
 * and ambient sets and SECBIT_NO_SETUID_FIXUP, so that a child spawned with another uid keeps
 * exactly those capabilities across its execve; then puts the thread back as it was. Should
 * putting it back ever fail, every later call refuses (a later spawn with a uid must never keep
 * machined's capabilities).
 */
export function withAmbientCapabilities<T>(names: readonly string[], spawn: () => T): T {
  const mask = capabilityMask(names);
  if (mask === 0n) return spawn();
  if (poisoned) throw new Error(`ambient capabilities are unavailable: ${poisoned}`);
  const saved = getCapabilities();
  if ((saved.permitted & mask) !== mask) throw new Error(`cannot pass ${names.join(', ')} on: this process does not hold ${names.length === 1 ? 'it' : 'them'}`);
  const bits = securebits();
  try {
    setCapabilities({ ...saved, inheritable: saved.inheritable | mask });
    for (const n of names) prctl(`prctl(PR_CAP_AMBIENT_RAISE, ${n})`, PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAPABILITIES[n]!);
    prctl('prctl(PR_SET_SECUREBITS)', PR_SET_SECUREBITS, bits | SECBIT_NO_SETUID_FIXUP);
    return spawn();
  } finally {
    try {
      prctl('prctl(PR_SET_SECUREBITS)', PR_SET_SECUREBITS, bits);
      prctl('prctl(PR_CAP_AMBIENT_CLEAR_ALL)', PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL);
      setCapabilities(saved);
      const now = getCapabilities();
      if (securebits() !== bits || now.inheritable !== saved.inheritable) throw new Error('the thread\'s securebits or inheritable set did not go back');
    } catch (err) {
      poisoned = (err as Error).message;
      throw err;
    }
  }
}

/** What /proc/<pid>/status says of a process's identity and capabilities. */
export interface ProcessCredentials {
  uid: number[];
  gid: number[];
  groups: number[];
  capInh: bigint;
  capPrm: bigint;
  capEff: bigint;
  capBnd: bigint;
  capAmb: bigint;
  noNewPrivs: boolean;
}

/** Parses /proc/<pid>/status text (or a task's). */
export function parseProcStatus(text: string): ProcessCredentials {
  const field = (name: string): string => {
    const m = new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(text);
    if (!m) throw new Error(`no ${name} in the status`);
    return m[1]!.trim();
  };
  const ids = (name: string) => field(name).split(/\s+/).filter(Boolean).map(Number);
  const hex = (name: string) => BigInt(`0x${field(name)}`);
  return {
    uid: ids('Uid'),
    gid: ids('Gid'),
    groups: ids('Groups'),
    capInh: hex('CapInh'),
    capPrm: hex('CapPrm'),
    capEff: hex('CapEff'),
    capBnd: hex('CapBnd'),
    capAmb: hex('CapAmb'),
    noNewPrivs: /^NoNewPrivs:\s*1/m.test(text),
  };
}

export function readProcessCredentials(pid: number, procRoot = '/proc'): ProcessCredentials {
  return parseProcStatus(fs.readFileSync(`${procRoot}/${pid}/status`, 'utf8'));
}
