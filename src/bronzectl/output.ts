// Output helpers that reproduce talosctl's formatting: Go's text/tabwriter tables (padding 3),
// go-humanize byte sizes and relative times, Go durations and file modes.
import { goDurationMs } from '../lib/duration.ts';

/** Rows (the header first) aligned as Go's tabwriter with padding 3: every cell but a row's last is padded. */
export function table(rows: readonly (readonly string[])[], padding = 3): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      if (i < row.length - 1) widths[i] = Math.max(widths[i] ?? 0, width(cell));
    });
  }
  return rows.map((row) => row.map((cell, i) => (i < row.length - 1 ? pad(cell, widths[i]! + padding) : cell)).join('') + '\n').join('');
}

/**
 * A table printed row by row (watches, event streams): the header goes out with the first row;
 * columns only grow. Rows given while the table is held (a watch's initial contents) are kept
 * and go out together at release(), aligned as one table; later rows take those widths, and
 * only a wider cell makes its column grow from there on.
 */
export class StreamTable {
  readonly #widths: number[];
  #headerDone = false;
  #held: string[][] | undefined;

  constructor(
    private readonly header: readonly string[],
    private readonly write: (s: string) => void,
    private readonly padding = 3,
    opts: { hold?: boolean } = {},
  ) {
    this.#widths = header.map((h) => width(h));
    if (opts.hold) this.#held = [];
  }

  #grow(cells: readonly string[]): void {
    cells.forEach((c, i) => {
      if (i < cells.length - 1) this.#widths[i] = Math.max(this.#widths[i] ?? 0, width(c));
    });
  }

  row(cells: readonly string[]): void {
    this.#grow(cells);
    if (this.#held) {
      this.#held.push([...cells]);
      return;
    }
    this.write(this.#headerOnce() + this.#line(cells));
  }

  /** Prints what was held (and the header, even with no rows); rows are printed as they come from now on. */
  release(): void {
    const held = this.#held;
    if (!held) return;
    this.#held = undefined;
    this.write(this.#headerOnce() + held.map((r) => this.#line(r)).join(''));
  }

  #headerOnce(): string {
    if (this.#headerDone) return '';
    this.#headerDone = true;
    return this.#line(this.header);
  }

  #line(cells: readonly string[]): string {
    return cells.map((c, i) => (i < cells.length - 1 ? pad(c, (this.#widths[i] ?? 0) + this.padding) : c)).join('') + '\n';
  }
}

function width(s: string): number {
  return [...s].length;
}

function pad(s: string, w: number): string {
  return s + ' '.repeat(Math.max(0, w - width(s)));
}

/**
 * go-humanize's Bytes: SI units, e.g. "5 B", "1.2 MB", "340 kB"; with `iec`, its IBytes: powers
 * of 1024, e.g. "8.0 KiB", "96 MiB".
 */
export function humanizeBytes(n: number | string | bigint, opts: { iec?: boolean } = {}): string {
  const s = Number(n);
  if (s < 10) return `${s} B`;
  const base = opts.iec ? 1024 : 1000;
  const sizes = opts.iec ? ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'] : ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  const e = Math.min(sizes.length - 1, Math.floor(Math.log(s) / Math.log(base)));
  const val = Math.floor((s / base ** e) * 10 + 0.5) / 10;
  return val < 10 ? `${val.toFixed(1)} ${sizes[e]}` : `${val.toFixed(0)} ${sizes[e]}`;
}

/**
 * The NODE of a reply when no node was named: the endpoint answered for itself, and NODE names
 * that node, by its address as talosctl shows nodes, not the endpoint's host:port (issue 17).
 */
export function nodeOfEndpoint(endpoint: string): string {
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(endpoint);
  if (v6) return v6[1]!;
  return endpoint.replace(/:\d+$/, '');
}

/** Go's time.Duration.String() of a duration rounded to whole seconds: "0s", "45s", "5m0s", "1h2m3s". */
export function goDurationString(ms: number): string {
  let s = Math.round(Math.abs(ms) / 1000);
  const sign = ms < 0 && s > 0 ? '-' : '';
  if (s === 0) return '0s';
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}

/** Parses a Go duration ("87600h", "1h30m", "90s", "1.5h"), in milliseconds; no sign. */
export function parseGoDuration(text: string): number {
  const s = text.trim();
  const ms = /^[+-]/.test(s) ? undefined : goDurationMs(s);
  if (ms === undefined) throw new Error(`invalid duration ${JSON.stringify(text)} (want e.g. 87600h, 1h30m, 90s)`);
  return ms;
}

const DAY = 86_400_000;
const WEEK = 7 * DAY;
const MONTH = 30 * DAY;
const YEAR = 12 * MONTH;

/** go-humanize Time: "now", "3 minutes ago", "10 years from now". */
export function humanizeTime(then: Date, now = new Date()): string {
  let diff = now.getTime() - then.getTime();
  const label = diff < 0 ? 'from now' : 'ago';
  diff = Math.abs(diff);
  const mags: Array<[number, string, number]> = [
    [1000, 'now', 1],
    [2000, '1 second %s', 1],
    [60_000, '%d seconds %s', 1000],
    [120_000, '1 minute %s', 1],
    [3_600_000, '%d minutes %s', 60_000],
    [7_200_000, '1 hour %s', 1],
    [DAY, '%d hours %s', 3_600_000],
    [2 * DAY, '1 day %s', 1],
    [WEEK, '%d days %s', DAY],
    [2 * WEEK, '1 week %s', 1],
    [MONTH, '%d weeks %s', WEEK],
    [2 * MONTH, '1 month %s', 1],
    [YEAR, '%d months %s', MONTH],
    [18 * MONTH, '1 year %s', 1],
    [2 * YEAR, '2 years %s', 1],
    [37 * YEAR, '%d years %s', YEAR],
    [Infinity, 'a long while %s', 1],
  ];
  for (const [limit, fmt, div] of mags) {
    if (diff < limit) return fmt.replace('%d', String(Math.floor(diff / div))).replace('%s', label);
  }
  return `a long while ${label}`;
}

/** Go's fs.FileMode.String() (the encoding machine.FileInfo.mode uses): "drwxr-xr-x", "Lrwxrwxrwx", "-rw-------". */
export function fileModeString(mode: number): string {
  const types = 'dalTLDpSugct?';
  let out = '';
  for (let i = 0; i < types.length; i++) {
    if ((mode >>> 0) & (2 ** (31 - i))) out += types[i];
  }
  if (out === '') out = '-';
  const rwx = 'rwxrwxrwx';
  for (let i = 0; i < 9; i++) out += mode & (1 << (8 - i)) ? rwx[i] : '-';
  return out;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Go's "Jan 2 2006" layout, local time. */
export function shortDate(d: Date): string {
  return `${MONTHS[d.getMonth()]} ${d.getDate()} ${d.getFullYear()}`;
}

/** Splits a byte stream into lines per source, so interleaved nodes never mix within a line. */
export class LineSlicer {
  readonly #partial = new Map<string, string>();

  constructor(private readonly emit: (source: string, line: string) => void) {}

  push(source: string, chunk: Buffer | string): void {
    const text = (this.#partial.get(source) ?? '') + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    const lines = text.split('\n');
    this.#partial.set(source, lines.pop()!);
    for (const line of lines) this.emit(source, line.replace(/\r$/, ''));
  }

  /** Emits every unterminated last line. */
  flush(): void {
    for (const [source, rest] of this.#partial) if (rest !== '') this.emit(source, rest);
    this.#partial.clear();
  }
}

/** JSON with object keys sorted at every level and four-space indentation (Go's encoder output). */
export function sortedJSON(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v instanceof Date) return v.toISOString();
    if (v && typeof v === 'object') {
      return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort((v as Record<string, unknown>)[k])]));
    }
    return v;
  };
  return JSON.stringify(sort(value), null, 4) + '\n';
}
