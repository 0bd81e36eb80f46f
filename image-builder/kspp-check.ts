// Checks a built kernel's .config and the default kernel command line against the KSPP
// requirement table (kernel-config/kspp.yaml), prints one row per requirement, and fails on any
// unwaived miss.
//
// usage: npx tsx image-builder/kspp-check.ts --config <.config> --cmdline <cmdline file>
//            [--arch amd64] [--table kernel-config/kspp.yaml]
// exit:  0 every requirement met or waived; 1 an unwaived miss; 2 bad input.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { LineCounter, isMap, isSeq, parseDocument } from 'yaml';

export const ARCHES = ['amd64', 'arm64'] as const;
export type Arch = (typeof ARCHES)[number];

/** A parsed .config: option name -> value (quotes removed), or null for "# CONFIG_X is not set". */
export type KernelConfig = Map<string, string | null>;

/** A parsed command line: normalized parameter name -> value, or true for a bare flag. */
export type Cmdline = Map<string, string | true>;

interface EntryBase {
  /** Position in the table (0-based), for messages. */
  index: number;
  /** Architectures the entry applies to; undefined = all. */
  arch?: Arch[];
  waived?: string;
}

export interface OptionEntry extends EntryBase {
  kind: 'option';
  /** Full name, CONFIG_ prefix included. */
  name: string;
  /** 'y', 'n' (is not set or absent), or an exact value. */
  want: string;
}

export interface CmdlineEntry extends EntryBase {
  kind: 'cmdline';
  name: string;
  /** true: present as a bare flag; false: absent; string: present with exactly this value. */
  want: string | boolean;
}

export type Entry = OptionEntry | CmdlineEntry;

export type Status = 'ok' | 'MISS' | 'waived';

export interface Result {
  entry: Entry;
  /** What the input has, rendered for the report. */
  have: string;
  satisfied: boolean;
  /** ok: satisfied; waived: not satisfied but waived; MISS: not satisfied and not waived. */
  status: Status;
}

/** Bad input: unreadable file, malformed .config, cmdline or table. The CLI exits 2 on it. */
export class InputError extends Error {
  override name = 'InputError';
}

// ---------------------------------------------------------------------------------------------
// .config

const ASSIGN_RE = /^(CONFIG_[A-Za-z0-9_]+)=(.*)$/;
const NOT_SET_RE = /^#\s*(CONFIG_[A-Za-z0-9_]+) is not set\s*$/;

function unquote(raw: string, where: string): string {
  if (!raw.startsWith('"')) return raw;
  if (raw.length < 2 || !raw.endsWith('"')) throw new InputError(`${where}: unterminated string value ${raw}`);
  return raw.slice(1, -1).replace(/\\(.)/g, '$1');
}

/** Parses kconfig output: `CONFIG_X=y`, `CONFIG_X="str"`, `# CONFIG_X is not set`; other comments are ignored. */
export function parseKernelConfig(text: string, source = '.config'): KernelConfig {
  const config: KernelConfig = new Map();
  text.split(/\r?\n/).forEach((rawLine, i) => {
    const line = rawLine.trim();
    const where = `${source}:${i + 1}`;
    if (line === '') return;
    const notSet = NOT_SET_RE.exec(line);
    if (notSet) {
      config.set(notSet[1]!, null);
      return;
    }
    if (line.startsWith('#')) return;
    const assign = ASSIGN_RE.exec(line);
    if (!assign) throw new InputError(`${where}: not a kconfig line: ${line}`);
    config.set(assign[1]!, unquote(assign[2]!, where));
  });
  return config;
}

// ---------------------------------------------------------------------------------------------
// Command line

/** The kernel treats '-' and '_' in parameter names as the same character. */
export function normalizeParam(name: string): string {
  return name.replace(/-/g, '_');
}

/**
 * Parses a kernel command line (the file may wrap it over several lines). Double quotes group
 * words as the kernel does (`param="a b"`); everything after a bare `--` goes to init and is
 * ignored. A repeated parameter keeps its last value.
 */
export function parseCmdline(text: string, source = 'cmdline'): Cmdline {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let inQuote = false;
  for (const ch of text) {
    if (ch === '"') {
      inQuote = !inQuote;
      inWord = true;
      word += ch;
    } else if (!inQuote && /\s/.test(ch)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (inQuote) throw new InputError(`${source}: unbalanced double quote`);
  if (inWord) words.push(word);

  const cmdline: Cmdline = new Map();
  for (const w of words) {
    if (w === '--') break;
    const bare = w.replace(/"/g, '');
    const eq = bare.indexOf('=');
    if (eq === 0) throw new InputError(`${source}: parameter without a name: ${w}`);
    if (eq < 0) cmdline.set(normalizeParam(bare), true);
    else cmdline.set(normalizeParam(bare.slice(0, eq)), bare.slice(eq + 1));
  }
  return cmdline;
}

// ---------------------------------------------------------------------------------------------
// Table

const OPTION_NAME_RE = /^CONFIG_[A-Z0-9_]+$/;
const PARAM_NAME_RE = /^[A-Za-z0-9_.-]+$/;
const KNOWN_KEYS = new Set(['option', 'cmdline', 'want', 'arch', 'waived']);

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}

/**
 * Parses and validates the requirement table (YAML: a list of entries). Every problem is an
 * InputError naming the entry's index (0-based) and line. Two entries for the same option or
 * parameter that apply to a common architecture are rejected.
 */
export function loadTable(text: string, source = 'kspp.yaml'): Entry[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new InputError(`${source}: invalid YAML: ${doc.errors.map((e) => e.message).join('; ')}`);
  }
  const root = doc.contents;
  if (!isSeq(root)) throw new InputError(`${source}: the table must be a YAML list of entries`);
  if (root.items.length === 0) throw new InputError(`${source}: the table has no entries`);

  const entries: Entry[] = root.items.map((node, index) => {
    const start = isMap(node) && node.range ? node.range[0] : undefined;
    const line = start === undefined ? undefined : lineCounter.linePos(start).line;
    const raw: unknown = isMap(node) ? node.toJS(doc) : undefined;
    const label = (name?: unknown): string =>
      `${source}: entry ${index}${line === undefined ? '' : ` (line ${line})`}${typeof name === 'string' ? ` ${name}` : ''}`;
    if (raw === undefined || raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw new InputError(`${label()}: must be a mapping with option or cmdline, and want`);
    }
    return validateEntry(raw as Record<string, unknown>, index, label);
  });

  const seen = new Map<string, Entry[]>();
  for (const entry of entries) {
    const key = `${entry.kind}:${entry.kind === 'cmdline' ? normalizeParam(entry.name) : entry.name}`;
    const earlier = seen.get(key) ?? [];
    const clash = earlier.find((other) => archesOverlap(other.arch, entry.arch));
    if (clash) {
      throw new InputError(
        `${source}: entry ${entry.index} ${entry.name}: duplicates entry ${clash.index} for the same architecture`,
      );
    }
    seen.set(key, [...earlier, entry]);
  }
  return entries;
}

function validateEntry(raw: Record<string, unknown>, index: number, label: (name?: unknown) => string): Entry {
  const name = raw.option ?? raw.cmdline;
  const fail = (what: string): never => {
    throw new InputError(`${label(name)}: ${what}`);
  };
  for (const key of Object.keys(raw)) {
    if (!KNOWN_KEYS.has(key)) fail(`unknown key "${key}" (allowed: ${[...KNOWN_KEYS].join(', ')})`);
  }
  const hasOption = 'option' in raw;
  const hasCmdline = 'cmdline' in raw;
  if (hasOption === hasCmdline) fail('must have exactly one of option or cmdline');
  if (!('want' in raw)) fail('missing want');

  let arch: Arch[] | undefined;
  if ('arch' in raw) {
    const a = raw.arch;
    if (!Array.isArray(a) || a.length === 0) fail(`arch must be a non-empty list (got ${describe(a)})`);
    for (const item of a as unknown[]) {
      if (typeof item !== 'string' || !(ARCHES as readonly string[]).includes(item)) {
        fail(`unknown arch ${describe(item)} (known: ${ARCHES.join(', ')})`);
      }
    }
    arch = [...new Set(a as Arch[])];
  }

  let waived: string | undefined;
  if ('waived' in raw) {
    if (typeof raw.waived !== 'string' || raw.waived.trim() === '') {
      fail(`waived must be a non-empty reason string (got ${describe(raw.waived)})`);
    }
    waived = (raw.waived as string).trim();
  }

  const want = raw.want;
  const base = { index, ...(arch ? { arch } : {}), ...(waived !== undefined ? { waived } : {}) };
  if (hasOption) {
    if (typeof name !== 'string' || !OPTION_NAME_RE.test(name)) {
      fail(`option must be a CONFIG_ name in capitals, e.g. CONFIG_BUG (got ${describe(name)})`);
    }
    if (typeof want !== 'string') {
      const hint = typeof want === 'number' ? '; quote numeric values, e.g. "65536"' : '';
      fail(`want for an option must be y, n or a quoted value (got ${describe(want)}${hint})`);
    }
    return { kind: 'option', name: name as string, want: want as string, ...base };
  }
  if (typeof name !== 'string' || !PARAM_NAME_RE.test(name)) {
    fail(`cmdline must be a parameter name without "=" or spaces (got ${describe(name)})`);
  }
  if (typeof want !== 'string' && typeof want !== 'boolean') {
    const hint = typeof want === 'number' ? '; quote numeric values, e.g. "1"' : '';
    fail(`want for a cmdline parameter must be true, false or a quoted value (got ${describe(want)}${hint})`);
  }
  return { kind: 'cmdline', name: name as string, want: want as string | boolean, ...base };
}

function archesOverlap(a: Arch[] | undefined, b: Arch[] | undefined): boolean {
  if (!a || !b) return true;
  return a.some((x) => b.includes(x));
}

export function appliesTo(entry: Entry, arch: Arch): boolean {
  return !entry.arch || entry.arch.includes(arch);
}

// ---------------------------------------------------------------------------------------------
// Evaluation

function renderValue(value: string): string {
  return value === '' || /\s/.test(value) ? JSON.stringify(value) : value;
}

function evaluateOption(entry: OptionEntry, config: KernelConfig): { have: string; satisfied: boolean } {
  const value = config.get(entry.name);
  const have = value === undefined ? 'absent' : value === null ? 'not set' : renderValue(value);
  if (entry.want === 'n') return { have, satisfied: value === undefined || value === null || value === 'n' };
  return { have, satisfied: value === entry.want };
}

function evaluateCmdline(entry: CmdlineEntry, cmdline: Cmdline): { have: string; satisfied: boolean } {
  const value = cmdline.get(normalizeParam(entry.name));
  const have = value === undefined ? 'absent' : value === true ? 'present' : renderValue(value);
  if (entry.want === true) return { have, satisfied: value === true };
  if (entry.want === false) return { have, satisfied: value === undefined };
  return { have, satisfied: value === entry.want };
}

/** Evaluates every entry that applies to arch, in table order. */
export function evaluate(entries: Entry[], config: KernelConfig, cmdline: Cmdline, arch: Arch): Result[] {
  return entries
    .filter((entry) => appliesTo(entry, arch))
    .map((entry) => {
      const { have, satisfied } =
        entry.kind === 'option' ? evaluateOption(entry, config) : evaluateCmdline(entry, cmdline);
      const status: Status = satisfied ? 'ok' : entry.waived !== undefined ? 'waived' : 'MISS';
      return { entry, have, satisfied, status };
    });
}

export function renderWant(entry: Entry): string {
  if (entry.kind === 'cmdline' && typeof entry.want === 'boolean') return entry.want ? 'present' : 'absent';
  return renderValue(entry.want as string);
}

/** Renders the result table and a summary line. */
export function formatReport(results: Result[], arch: Arch): string {
  const rows = results.map((r) => [
    r.entry.kind === 'cmdline' ? `cmdline ${r.entry.name}` : r.entry.name,
    renderWant(r.entry),
    r.have,
    r.status === 'waived' ? `waived (${r.entry.waived})` : r.status,
  ]);
  const header = ['option', 'want', 'have', 'status'];
  const widths = header.map((h, col) => Math.max(h.length, ...rows.map((row) => row[col]!.length)));
  // The status column is last and may be long; it is not padded.
  const fmt = (row: string[]): string =>
    row.map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd(widths[col]!))).join('  ');
  const lines = [fmt(header), fmt(widths.map((w) => '-'.repeat(Math.min(w, 60)))), ...rows.map(fmt)];

  const count = (s: Status): number => results.filter((r) => r.status === s).length;
  lines.push('', `kspp-check (${arch}): ${results.length} requirements: ${count('ok')} ok, ${count('waived')} waived, ${count('MISS')} MISS`);
  const unneeded = results.filter((r) => r.satisfied && r.entry.waived !== undefined);
  if (unneeded.length > 0) {
    lines.push(`note: waiver no longer needed (requirement is met): ${unneeded.map((r) => r.entry.name).join(', ')}`);
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// CLI

const USAGE =
  'usage: kspp-check --config <path to .config> --cmdline <path to cmdline file> [--arch amd64] [--table kernel-config/kspp.yaml]';

function readInput(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const reason = err instanceof Error && 'code' in err ? String((err as NodeJS.ErrnoException).code) : String(err);
    throw new InputError(`cannot read ${what} ${path}: ${reason}`);
  }
}

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** Runs the CLI; returns the exit code. */
export function main(argv: string[], io: Io = { out: console.log, err: console.error }): number {
  try {
    let values;
    try {
      ({ values } = parseArgs({
        args: argv,
        options: {
          config: { type: 'string' },
          cmdline: { type: 'string' },
          arch: { type: 'string', default: 'amd64' },
          table: { type: 'string' },
        },
        strict: true,
        allowPositionals: false,
      }));
    } catch (err) {
      throw new InputError(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    }
    if (!values.config || !values.cmdline) throw new InputError(`--config and --cmdline are required\n${USAGE}`);
    const arch = values.arch;
    if (!(ARCHES as readonly string[]).includes(arch)) {
      throw new InputError(`unknown --arch ${arch} (known: ${ARCHES.join(', ')})`);
    }
    const tablePath = values.table ?? fileURLToPath(new URL('../kernel-config/kspp.yaml', import.meta.url));

    const entries = loadTable(readInput(tablePath, 'table'), tablePath);
    const config = parseKernelConfig(readInput(values.config, '--config'), values.config);
    if (config.size === 0) throw new InputError(`${values.config}: no CONFIG_ lines; is this a kernel .config?`);
    const cmdline = parseCmdline(readInput(values.cmdline, '--cmdline'), values.cmdline);

    const results = evaluate(entries, config, cmdline, arch as Arch);
    io.out(formatReport(results, arch as Arch));
    return results.some((r) => r.status === 'MISS') ? 1 : 0;
  } catch (err) {
    if (err instanceof InputError) {
      io.err(`kspp-check: ${err.message}`);
      return 2;
    }
    throw err;
  }
}

const invokedPath = process.argv[1];
if (invokedPath && resolve(invokedPath) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
