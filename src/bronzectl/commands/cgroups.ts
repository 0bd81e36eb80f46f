// `bronzectl cgroups [--preset cpu|cpuset|io|memory|process|psi|swap|usage]` (alias cg): the
// node's cgroup v2 tree with one row per group, as `talosctl cgroups` prints it: the tree in the
// NAME column, then the preset's columns (talosctl's presets, their names and formats). Without
// --preset, Bronze's `usage` (memory, CPU time and processes at once), where talosctl asks for
// one; talosctl's --schema-file (Go templates) is not offered.
//
// talosctl copies /sys/fs/cgroup as a .tar.gz; Bronze reads it through List (the groups) and
// Read (the control files each preset needs), since cgroupfs reports every file's size as 0.
// Process ids are named from the Processes call: by their argv[0], since every Bronze daemon is
// the same executable (talosctl names them by executable).
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { UserError } from '../session.ts';
import { humanizeBytes, table } from '../output.ts';

export const CGROUP_ROOT = '/sys/fs/cgroup';

/** One group: its control files' contents (those read), its parent and its children by name. */
export interface CgroupNode {
  files: Map<string, string>;
  parent?: CgroupNode;
  children: Map<string, CgroupNode>;
  /** cgroup.procs resolved to process names. */
  procNames?: string[];
}

// --- values, as talosctl parses and prints them (internal/pkg/cgroups) ---

export interface Value {
  set: boolean;
  max?: boolean;
  val?: bigint;
  /** Digits after the decimal point. */
  frac?: number;
}

const UNSET: Value = { set: false };

/**
 * Reads in flight at once. A pool of its own, not src/lib/limit.ts's Limiter: this file is part
 * of bronzectl's front, which bundles nothing from src/lib but a few listed files (program.test.ts).
 */
const READERS = 16;

export function parseValue(s: string | undefined): Value {
  if (s === undefined) return UNSET;
  s = s.trim();
  if (s === 'max') return { set: true, max: true };
  const [l, r] = s.split('.', 2) as [string, string | undefined];
  if (!/^-?\d+$/.test(l + (r ?? ''))) return UNSET;
  return { set: true, val: BigInt(l + (r ?? '')), frac: r?.length ?? 0 };
}

export function valueString(v: Value): string {
  if (!v.set) return 'unset';
  if (v.max) return 'max';
  let s = (v.val ?? 0n).toString();
  const frac = v.frac ?? 0;
  if (frac === 0) return s;
  if (s.length < frac + 1) s = '0'.repeat(frac + 1 - s.length) + s;
  return `${s.slice(0, s.length - frac)}.${s.slice(s.length - frac)}`;
}

/** A cgroup value as Go's humanize.IBytes ("0 B", "8.0 KiB", "96 MiB"); unset, max and fractions as they are. */
export function humanizeIBytes(v: Value): string {
  if (!v.set || v.max || (v.frac ?? 0) > 0) return valueString(v);
  return humanizeBytes(v.val ?? 0n, { iec: true });
}

/** a / b in percent, two decimals, as talosctl's DivideBy. */
export function divideBy(a: Value, b: Value): Value {
  if (!a.set || !b.set) return UNSET;
  if (b.max && !a.max) return { set: true, val: 0n, frac: 2 };
  if (a.max && b.max) return { set: true, val: 10000n, frac: 2 };
  if (b.val === 0n || a.max) return { set: true, max: true };
  const av = Number(a.val) / 10 ** (a.frac ?? 0);
  const bv = Number(b.val) / 10 ** (b.frac ?? 0);
  return { set: true, val: BigInt(Math.round((av / bv) * 100 * 100)), frac: 2 };
}

/** Go's time.Duration.String() of a number of microseconds: "0s", "350µs", "1.5s", "2m3.004s". */
export function usecToDuration(v: Value): string {
  if (!v.set || v.max) return valueString(v);
  const ns = (v.val ?? 0n) * 1000n;
  if (ns === 0n) return '0s';
  const neg = ns < 0n;
  const abs = neg ? -ns : ns;
  const fracStr = (n: bigint, digits: number) => {
    const s = n.toString().padStart(digits, '0').replace(/0+$/, '');
    return s ? `.${s}` : '';
  };
  let out: string;
  if (abs < 1000n) out = `${abs}ns`;
  else if (abs < 1_000_000n) out = `${abs / 1000n}${fracStr(abs % 1000n, 3)}µs`;
  else if (abs < 1_000_000_000n) out = `${abs / 1_000_000n}${fracStr(abs % 1_000_000n, 6)}ms`;
  else {
    const totalS = abs / 1_000_000_000n;
    const secs = `${totalS % 60n}${fracStr(abs % 1_000_000_000n, 9)}s`;
    const h = totalS / 3600n;
    const m = (totalS / 60n) % 60n;
    out = h > 0n ? `${h}h${m}m${secs}` : m > 0n ? `${m}m${secs}` : secs;
  }
  return neg ? `-${out}` : out;
}

/** A file of `key value` lines (cpu.stat, memory.stat). */
export function flatMap(text: string | undefined): Map<string, Value> {
  const out = new Map<string, Value>();
  for (const line of (text ?? '').split('\n')) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined) out.set(k, parseValue(v));
  }
  return out;
}

/** A file of `key k=v k=v` lines (io.stat, *.pressure). */
export function nestedKeyed(text: string | undefined): Map<string, Map<string, Value>> {
  const out = new Map<string, Map<string, Value>>();
  for (const line of (text ?? '').split('\n')) {
    const [k, ...pairs] = line.trim().split(/\s+/);
    if (!k || pairs.length === 0) continue;
    const m = new Map<string, Value>();
    for (const p of pairs) {
      const i = p.indexOf('=');
      if (i > 0) m.set(p.slice(0, i), parseValue(p.slice(i + 1)));
    }
    out.set(k, m);
  }
  return out;
}

/** Space-separated values, printed as Go prints a slice of them: "[max 100000]". */
function valuesString(text: string | undefined): string {
  if (text === undefined) return '[]';
  return `[${text.trim().split(/\s+/).filter(Boolean).map((s) => valueString(parseValue(s))).join(' ')}]`;
}

function lines(text: string | undefined): string[] {
  return (text ?? '').split('\n').map((l) => l.trim()).filter(Boolean);
}

// --- presets: talosctl's columns, as data ---

export interface Column {
  name: string;
  /** The control files it reads. */
  files: readonly string[];
  render: (n: CgroupNode) => string;
}

const v = (n: CgroupNode, file: string) => parseValue(n.files.get(file));
const pad = (s: string, w: number) => s.padStart(w);
const bytes = (name: string, file: string): Column => ({ name, files: [file], render: (n) => pad(humanizeIBytes(v(n, file)), 8) });
const percent = (name: string, a: string, b: string): Column => ({ name, files: [a, b], render: (n) => `${pad(valueString(divideBy(v(n, a), v(n, b))), 6)}%` });
const stat = (n: CgroupNode, file: string, key: string) => flatMap(n.files.get(file)).get(key) ?? UNSET;
const pressure = (n: CgroupNode, file: string, kind: 'some' | 'full', key: string) => nestedKeyed(n.files.get(file)).get(kind)?.get(key) ?? UNSET;
const cpuTime = (name: string, key: string): Column => ({ name, files: ['cpu.stat'], render: (n) => pad(usecToDuration(stat(n, 'cpu.stat', key)), 12) });
const cpuShare = (name: string, key: string): Column => ({
  name,
  files: ['cpu.stat'],
  render: (n) => (n.parent ? `${pad(valueString(divideBy(stat(n, 'cpu.stat', key), stat(n.parent, 'cpu.stat', key))), 6)}%` : '-'),
});
const psi = (name: string, file: string, kind: 'some' | 'full'): Column => ({ name, files: [file], render: (n) => pad(valueString(pressure(n, file, kind, 'avg10')), 6) });
const raw = (name: string, file: string, width: number): Column => ({ name, files: [file], render: (n) => pad((n.files.get(file) ?? '').trim() || 'unset', width) });
const count = (name: string, file: string): Column => ({ name, files: [file], render: (n) => pad(String(lines(n.files.get(file)).length), 7) });
const processes: Column = {
  name: 'Processes',
  files: ['cgroup.procs'],
  render: (n) => (n.parent ? `[${(n.procNames ?? lines(n.files.get('cgroup.procs'))).join(' ')}]`.slice(0, 50) : ''),
};
const ioStat = (name: string, a: string, b: string, human: boolean, onlyChildren: boolean): Column => ({
  name,
  files: ['io.stat'],
  render: (n) => {
    if (onlyChildren && !n.parent) return '';
    const f = (x: Value | undefined) => (human ? humanizeIBytes(x ?? UNSET) : valueString(x ?? UNSET));
    return [...nestedKeyed(n.files.get('io.stat'))].sort(([x], [y]) => x.localeCompare(y)).map(([disk, m]) => `${disk}: ${f(m.get(a))}/${f(m.get(b))} `).join('');
  },
});

export const PRESETS: Readonly<Record<string, readonly Column[]>> = {
  cpu: [
    { name: 'CpuWeight', files: ['cpu.weight'], render: (n) => pad(valueString(v(n, 'cpu.weight')), 6) },
    { name: 'CpuNice', files: ['cpu.weight.nice'], render: (n) => pad(valueString(v(n, 'cpu.weight.nice')), 6) },
    { name: 'CpuMax', files: ['cpu.max'], render: (n) => pad(valuesString(n.files.get('cpu.max')), 6) },
    cpuTime('CpuUser', 'user_usec'),
    cpuShare('User/%', 'user_usec'),
    cpuTime('CpuSystem', 'system_usec'),
    cpuShare('System/%', 'system_usec'),
    cpuTime('Throttled', 'throttled_usec'),
  ],
  cpuset: [raw('CpuSet', 'cpuset.cpus', 12), raw('CpuSet(Eff)', 'cpuset.cpus.effective', 12), raw('Mems', 'cpuset.mems', 12), raw('Mems(Eff)', 'cpuset.mems.effective', 12)],
  io: [
    ioStat('Bytes Read/Written', 'rbytes', 'wbytes', true, false),
    ioStat('ios Read/Write', 'rios', 'wios', false, true),
    { name: 'PressAvg10', files: ['io.pressure'], render: (n) => pad(valueString(pressure(n, 'io.pressure', 'some', 'avg10')), 6) },
    { name: 'PressAvg60', files: ['io.pressure'], render: (n) => pad(valueString(pressure(n, 'io.pressure', 'some', 'avg60')), 6) },
    { name: 'PressTotal', files: ['io.pressure'], render: (n) => pad(usecToDuration(pressure(n, 'io.pressure', 'some', 'total')), 12) },
  ],
  memory: [
    bytes('MemCurrent', 'memory.current'),
    bytes('MemPeak', 'memory.peak'),
    bytes('MemLow', 'memory.low'),
    percent('Peak/Low', 'memory.peak', 'memory.low'),
    bytes('MemHigh', 'memory.high'),
    bytes('MemMin', 'memory.min'),
    percent('Current/Min', 'memory.current', 'memory.min'),
    bytes('MemMax', 'memory.max'),
  ],
  process: [
    { name: 'PidsCurrent', files: ['pids.current'], render: (n) => pad(valueString(v(n, 'pids.current')), 8) },
    { name: 'PidsPeak', files: ['pids.peak'], render: (n) => pad(valueString(v(n, 'pids.peak')), 8) },
    { name: 'PidsMax', files: ['pids.max'], render: (n) => pad(valueString(v(n, 'pids.max')), 8) },
    count('Procs', 'cgroup.procs'),
    count('Threads', 'cgroup.threads'),
    processes,
  ],
  psi: [bytes('MemCurrent', 'memory.current'), psi('MemPsiSome10', 'memory.pressure', 'some'), psi('MemPsi10', 'memory.pressure', 'full'), psi('CpuPsi10', 'cpu.pressure', 'full'), psi('IoPsi10', 'io.pressure', 'full')],
  swap: [
    bytes('SwapCurrent', 'memory.swap.current'),
    bytes('SwapPeak', 'memory.swap.peak'),
    bytes('SwapHigh', 'memory.swap.high'),
    bytes('SwapMax', 'memory.swap.max'),
    bytes('ZswapCurrent', 'memory.zswap.current'),
    bytes('ZswapMax', 'memory.zswap.max'),
    { name: 'ZswapWriteback', files: ['memory.zswap.writeback'], render: (n) => valueString(v(n, 'memory.zswap.writeback')) },
  ],
  // Bronze's: what a group uses and what protects or limits it, at a glance.
  usage: [
    bytes('MemCurrent', 'memory.current'),
    bytes('MemMin', 'memory.min'),
    bytes('MemLow', 'memory.low'),
    bytes('MemMax', 'memory.max'),
    cpuTime('CpuUser', 'user_usec'),
    cpuTime('CpuSystem', 'system_usec'),
    { name: 'PidsCurrent', files: ['pids.current'], render: (n) => pad(valueString(v(n, 'pids.current')), 8) },
    processes,
  ],
};

export const DEFAULT_PRESET = 'usage';

/** The control files a preset reads. */
export function presetFiles(preset: readonly Column[]): string[] {
  return [...new Set(preset.flatMap((c) => c.files))];
}

// --- the tree ---

/** The tree from the groups' relative paths ('.', 'system', 'system/apid') and their files (keyed by relative path). */
export function buildTree(groups: readonly string[], files: (group: string) => Map<string, string>): CgroupNode {
  const root: CgroupNode = { files: files('.'), children: new Map() };
  for (const g of [...groups].filter((x) => x !== '.' && x !== '').sort()) {
    let node = root;
    const parts = g.split('/');
    parts.forEach((part, i) => {
      let child = node.children.get(part);
      if (!child) {
        child = { files: i === parts.length - 1 ? files(g) : new Map(), parent: node, children: new Map() };
        node.children.set(part, child);
      }
      node = child;
    });
  }
  return root;
}

/** talosctl's rows: the tree drawn in the NAME column (├──, └──, │ and 3-space indents). */
export function renderTree(root: CgroupNode, preset: readonly Column[]): string {
  const rows: string[][] = [['NAME', ...preset.map((c) => c.name)]];
  const walk = (name: string, node: CgroupNode, level: number, ended: number[], last: boolean, isRoot: boolean) => {
    let prefix = '';
    for (let i = 0; i < level; i++) prefix += ended.includes(i) ? '    ' : '│   ';
    const edge = isRoot ? '' : last ? '└──' : '├──';
    rows.push([`${prefix}${edge}${name}`, ...preset.map((c) => c.render(node))]);
    const names = [...node.children.keys()].sort();
    const nextEnded = last ? [...ended, level] : ended;
    names.forEach((child, i) => walk(child, node.children.get(child)!, isRoot ? level : level + 1, nextEnded, i === names.length - 1, false));
  };
  walk('.', root, 0, [], false, true);
  return table(rows);
}

/** A process's name for the Processes column: its argv[0]'s base name, else its command. */
export function processName(p: { command?: string; executable?: string; args?: string }): string {
  const first = (p.args ?? '').trim().split(/\s+/)[0] || p.command || p.executable || '';
  return first.slice(first.lastIndexOf('/') + 1);
}

export function register(program: Command, ctx: Ctx): void {
  program
    .command('cgroups')
    .alias('cg')
    .description('Retrieve cgroups usage information')
    .option('--preset <name>', `preset name (one of: ${Object.keys(PRESETS).join(', ')}; default ${DEFAULT_PRESET})`)
    .action(async (opts: { preset?: string }) => {
      const name = opts.preset ?? DEFAULT_PRESET;
      const preset = PRESETS[name];
      if (!preset) throw new UserError(`invalid preset name: ${name} (valid [${Object.keys(PRESETS).join(' ')}])`);
      const s = ctx.session();
      if ((await s.nodes()).length > 1) throw new UserError('"cgroups" command is not supported with multiple nodes');
      await s.perNode(async (c, o) => {
        const groups: string[] = [];
        for await (const info of c.machine.List({ root: CGROUP_ROOT, recurse: true, recursion_depth: 0, types: ['DIRECTORY'] }, o)) {
          if (info.metadata?.error) throw new Error(info.metadata.error);
          if (!info.error) groups.push(info.relative_name || '.');
        }
        const wanted = presetFiles(preset);
        const contents = new Map<string, Map<string, string>>();
        // Each file on its own Read, a few at a time; one the kernel lacks (no swap, the root's memory.current) is left unset.
        const jobs = groups.flatMap((g) => wanted.map((f) => [g, f] as const));
        const readOne = async ([g, f]: readonly [string, string]) => {
          const chunks: Uint8Array[] = [];
          try {
            for await (const m of c.machine.Read({ path: `${CGROUP_ROOT}/${g === '.' ? '' : `${g}/`}${f}` }, o)) if (m.bytes?.length) chunks.push(m.bytes);
          } catch {
            return;
          }
          let m = contents.get(g);
          if (!m) contents.set(g, (m = new Map()));
          m.set(f, Buffer.concat(chunks).toString('utf8'));
        };
        // READERS at once, each taking the next file as it finishes (no batch waits for its slowest).
        let next = 0;
        await Promise.all(Array.from({ length: Math.min(READERS, jobs.length) }, async () => {
          while (next < jobs.length) await readOne(jobs[next++]!);
        }));
        let names: Map<string, string> | undefined;
        if (preset.includes(processes)) {
          try {
            const reply = await c.machine.Processes({}, o);
            names = new Map((reply.messages?.[0]?.processes ?? []).map((p) => [String(p.pid), processName(p)]));
          } catch (e) {
            s.warn(`error getting processes: ${(e as Error).message}`);
          }
        }
        const root = buildTree(groups, (g) => contents.get(g) ?? new Map());
        const resolve = (n: CgroupNode) => {
          n.procNames = lines(n.files.get('cgroup.procs')).map((pid) => names?.get(pid) ?? pid);
          for (const child of n.children.values()) resolve(child);
        };
        resolve(root);
        s.out(renderTree(root, preset));
      });
    });
}
