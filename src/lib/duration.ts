// Go's time.Duration text ("2m30s", "1h", "500ms", "-1.5h", "0"), as Talos's configuration and
// talosctl's flags write durations: one parser for the configuration, bronzectl and timed.

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
// µ (U+00B5, the micro sign) and μ (U+03BC, Greek mu) as escapes: the bundles must be ASCII
// (src/lib/role-source.ts), and esbuild leaves a regular expression's characters as written.
const DURATION_PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/y;

/** A Go `time.Duration` string ("2m30s", "1h", "500ms", "0") in milliseconds; undefined if malformed. */
export function goDurationMs(s: string): number | undefined {
  let i = 0;
  let sign = 1;
  if (s[0] === '+' || s[0] === '-') {
    sign = s[0] === '-' ? -1 : 1;
    i = 1;
  }
  if (s.slice(i) === '0') return 0;
  if (i >= s.length) return undefined;
  let total = 0;
  while (i < s.length) {
    DURATION_PART.lastIndex = i;
    const m = DURATION_PART.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * DURATION_UNITS[m[2]!]!;
    i = DURATION_PART.lastIndex;
  }
  return sign * total;
}
