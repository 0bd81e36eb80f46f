// The functions a role runs while the node boots, recorded once in a real boot so that the build
// can put their bytecode in the role's V8 code cache (image-builder/code-cache.ts), the way a
// compiler's profile-guided build uses a profile taken from a run.
//
// Why: a role's code cache holds the functions its module code runs (what V8 compiles while the
// bundle loads); every other function is compiled from source the first time it is called. Under
// QEMU/TCG that compile is slow, and a boot calls a few thousand functions that module code does
// not. A cache that also holds them (made after a boot, in an experiment) gave `make bench` API
// 0.92 and Running 0.88, CPU time at Running 11% less (6 interleaved runs); a cache that holds
// every function (`--no-lazy`) was slower, as it deserializes three times the bytecode.
//
// How: the kernel argument `bronze.debug.bootfunctions=<seconds>` makes each role, that many
// seconds after it loaded, ask V8 which of its bundle's functions have run (the inspector's
// best-effort coverage: no instrumentation, no cost before it is asked) and write them to
// the first virtio disk, which image-builder/boot-functions.ts attaches and then reads. A key is
// a digest of the function's source text, not its position, so a recorded list outlives edits
// elsewhere in the bundle: a function whose text changed is compiled lazily again, as before,
// until the list is recorded anew (`make boot-functions`). The list is data in the repository
// (image-builder/boot-functions/<role>.txt), so a build stays reproducible.
import { ROLE_MODULES } from '../roles.ts';

/** The key of the function whose source text is `source` from `start` to `end` (UTF-16 offsets). */
export function functionKey(source: string, start: number, end: number): string {
  // Not imported at the top: a role loads this module whether or not it records.
  const crypto = process.getBuiltinModule('node:crypto') as typeof import('node:crypto');
  return crypto.createHash('sha256').update(source.slice(start, end)).digest('hex').slice(0, 16);
}

/** One function of a script as the inspector's coverage gives it: its whole range comes first. */
export interface CoveredFunction {
  functionName: string;
  ranges: { startOffset: number; endOffset: number; count: number }[];
}

/**
 * One recorded function: its key, the key of the function around it (`-` for none), where it
 * starts in that one and its length. The build finds a function V8 already lists by its key;
 * one nested in a function not yet compiled it finds through the one around it (V8 lists a
 * function only once the one around it has run).
 */
export interface BootFunction {
  key: string;
  parent: string;
  offset: number;
  length: number;
}

/**
 * The functions that have run (count above 0), and every function around one that has (whose
 * bytecode V8 may have flushed since: the build compiles a nested function only once the one
 * around it is), outer before inner.
 */
export function ranFunctions(source: string, functions: readonly CoveredFunction[]): BootFunction[] {
  const ranges = functions
    .map((f) => f.ranges[0])
    .filter((r): r is NonNullable<typeof r> => r !== undefined)
    // The script's own top level (the whole source) is compiled with the script anyway.
    .filter((r) => !(r.startOffset === 0 && r.endOffset >= source.length))
    // Outer before inner: by start, then the longer first.
    .sort((a, b) => a.startOffset - b.startOffset || b.endOffset - a.endOffset);
  type Range = (typeof ranges)[number];
  const keep = new Set<Range>();
  const parentOf = new Map<Range, Range | undefined>();
  const open: Range[] = [];
  for (const r of ranges) {
    while (open.length > 0 && open[open.length - 1]!.endOffset <= r.startOffset) open.pop();
    parentOf.set(r, open[open.length - 1]);
    if (r.count > 0) {
      keep.add(r);
      for (let i = open.length - 1; i >= 0 && !keep.has(open[i]!); i--) keep.add(open[i]!);
    }
    open.push(r);
  }
  const key = (r: Range) => functionKey(source, r.startOffset, r.endOffset);
  const seen = new Set<string>();
  const out: BootFunction[] = [];
  for (const r of ranges) {
    if (!keep.has(r)) continue;
    const p = parentOf.get(r);
    const f = { key: key(r), parent: p ? key(p) : '-', offset: r.startOffset - (p?.startOffset ?? 0), length: r.endOffset - r.startOffset };
    const line = formatBootFunction(f);
    if (seen.has(line)) continue;
    seen.add(line);
    out.push(f);
  }
  return out;
}

export function formatBootFunction(f: BootFunction): string {
  return `${f.key} ${f.parent} ${f.offset} ${f.length}`;
}

/** Parses a recorded list (one function a line, `#` comments): the functions, or an error naming the bad line. */
export function parseBootFunctions(text: string, name: string): BootFunction[] {
  const out: BootFunction[] = [];
  text.split('\n').forEach((line, i) => {
    const l = line.trim();
    if (l === '' || l.startsWith('#')) return;
    const m = /^([0-9a-f]{16}) ([0-9a-f]{16}|-) (\d+) (\d+)$/.exec(l);
    if (!m) throw new Error(`${name}:${i + 1}: ${JSON.stringify(l)} is not "<key> <key of the function around it, or -> <offset in it> <length>"`);
    out.push({ key: m[1]!, parent: m[2]!, offset: Number(m[3]), length: Number(m[4]) });
  });
  return out;
}

/**
 * Where each recorded function is in `source`: by its key among the functions V8 lists
 * (`listed`: key to start offsets), or else at its offset in a function around it already found
 * whose text there still has its key. Outer before inner, as recorded; each start once.
 */
export function locateBootFunctions(source: string, recorded: readonly BootFunction[], listed: ReadonlyMap<string, readonly number[]>): { starts: number[]; missing: number } {
  const found = new Map<string, number[]>();
  const starts: number[] = [];
  const taken = new Set<number>();
  let missing = 0;
  for (const f of recorded) {
    let at = [...(listed.get(f.key) ?? [])];
    if (at.length === 0) at = (found.get(f.parent) ?? []).map((p) => p + f.offset).filter((s) => functionKey(source, s, s + f.length) === f.key);
    if (at.length === 0) {
      if (!found.has(f.key)) missing++;
      continue;
    }
    found.set(f.key, [...new Set([...(found.get(f.key) ?? []), ...at])]);
    for (const s of at) if (!taken.has(s)) taken.add(s), starts.push(s);
  }
  return { starts, missing };
}

/**
 * The disk a recording boot writes to: it must begin with DISK_MAGIC (the host tool writes it),
 * so that the argument can never make a role write over a real disk. Each role has its slot of
 * SLOT_BYTES after the first one, in ROLE_MODULES order: `<role>\n<byte length>\n<functions, one per line>`.
 */
export const DISK_MAGIC = 'BRONZE-BOOT-FUNCTIONS\n';
export const SLOT_BYTES = 4 * 1024 * 1024;
export const RECORD_DISK = '/dev/vda';

export function slotOffset(role: string): number {
  const i = Object.keys(ROLE_MODULES).indexOf(role);
  if (i < 0) throw new Error(`${role}: not a role`);
  return (i + 1) * SLOT_BYTES;
}

/** Formats a role's slot (its functions, formatted); throws if they do not fit. */
export function formatSlot(role: string, keys: readonly string[]): Buffer {
  const body = keys.map((k) => `${k}\n`).join('');
  const out = Buffer.from(`${role}\n${Buffer.byteLength(body)}\n${body}`);
  if (out.length > SLOT_BYTES) throw new Error(`${role}: ${keys.length} keys do not fit in a slot of ${SLOT_BYTES} bytes`);
  return out;
}

/** Reads a role's slot from the disk's bytes: its lines, or undefined if the role wrote none. */
export function readSlot(disk: Buffer, role: string): string[] | undefined {
  const at = slotOffset(role);
  const head = disk.toString('latin1', at, at + 64);
  const m = /^([a-z]+)\n(\d+)\n/.exec(head);
  if (!m || m[1] !== role) return undefined;
  const start = at + m[0].length;
  return disk.toString('latin1', start, start + Number(m[2])).split('\n').filter(Boolean);
}

/**
 * If the kernel command line asks for it, records this role's functions that have run,
 * `seconds` after now (see above). `source` is the script's text exactly as compiled, and
 * `url` its name. Returns at once; reports on stderr (machined relays it to the console).
 */
export function maybeRecordBootFunctions(role: string, url: string, source: string): void {
  const fs = process.getBuiltinModule('node:fs') as typeof import('node:fs');
  let cmdline: string;
  try {
    cmdline = fs.readFileSync('/proc/cmdline', 'utf8');
  } catch {
    return;
  }
  const m = /(?:^|\s)bronze\.debug\.bootfunctions=(\d+)(?:\s|$)/.exec(cmdline);
  if (!m) return;
  const timer = setTimeout(() => {
    void record(role, url, source).then(
      (n) => process.stderr.write(`${role}: boot functions: ${n} recorded on ${RECORD_DISK}\n`),
      (err: Error) => process.stderr.write(`${role}: boot functions: ${err.message}\n`),
    );
  }, Number(m[1]) * 1000);
  timer.unref();
}

async function record(role: string, url: string, source: string): Promise<number> {
  const fs = process.getBuiltinModule('node:fs') as typeof import('node:fs');
  const inspector = process.getBuiltinModule('node:inspector') as typeof import('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))));
  let functions: CoveredFunction[];
  try {
    await post('Profiler.enable');
    const cov = (await post('Profiler.getBestEffortCoverage')) as { result: { url: string; functions: CoveredFunction[] }[] };
    const script = cov.result.find((s) => s.url === url);
    if (!script) throw new Error(`the inspector shows no script ${url}`);
    functions = script.functions;
  } finally {
    session.disconnect();
  }
  const keys = ranFunctions(source, functions).map(formatBootFunction);
  const fd = fs.openSync(RECORD_DISK, 'r+');
  try {
    const magic = Buffer.alloc(DISK_MAGIC.length);
    fs.readSync(fd, magic, 0, magic.length, 0);
    if (magic.toString('latin1') !== DISK_MAGIC) throw new Error(`${RECORD_DISK} does not begin with ${JSON.stringify(DISK_MAGIC)}: not a recording disk, nothing written`);
    const slot = formatSlot(role, keys);
    fs.writeSync(fd, slot, 0, slot.length, slotOffset(role));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return keys.length;
}
