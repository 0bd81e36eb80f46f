import { describe, expect, it } from 'vitest';
import { LineSlicer, StreamTable, fileModeString, goDurationString, humanizeBytes, humanizeTime, nodeOfEndpoint, parseGoDuration, sortedJSON, table } from './output.ts';

describe('output helpers (talosctl formatting)', () => {
  it('table pads every cell but the last by 3, as Go tabwriter', () => {
    expect(table([['NODE', 'A'], ['node01', 'x']])).toBe('NODE     A\nnode01   x\n');
  });

  it('StreamTable prints the header with the first row and only grows columns', () => {
    let out = '';
    const t = new StreamTable(['N', 'V'], (s) => (out += s));
    t.row(['ab', '1']);
    t.row(['abcd', '2']);
    expect(out).toBe('N    V\nab   1\nabcd   2\n');
  });

  it('humanizeBytes as go-humanize (SI)', () => {
    expect([0, 9, 10, 999, 1000, 1_234_567, 50_000_000, 10_500_000_000].map((n) => humanizeBytes(n))).toEqual(['0 B', '9 B', '10 B', '999 B', '1.0 kB', '1.2 MB', '50 MB', '11 GB']);
  });

  it('humanizeBytes with iec as go-humanize IBytes', () => {
    expect([0, 9, 10, 1023, 1024, 8192, 100_663_296, 1_610_612_736, 10_500_000_000n].map((n) => humanizeBytes(n, { iec: true }))).toEqual(['0 B', '9 B', '10 B', '1023 B', '1.0 KiB', '8.0 KiB', '96 MiB', '1.5 GiB', '9.8 GiB']);
  });

  it('nodeOfEndpoint: the endpoint without its port (IPv6 without brackets)', () => {
    expect(['127.0.0.1:50000', '10.0.2.15', 'node1:50000', '[fd00::1]:50000', '[fd00::2]'].map(nodeOfEndpoint)).toEqual(['127.0.0.1', '10.0.2.15', 'node1', 'fd00::1', 'fd00::2']);
  });

  it('Go durations: printing and parsing', () => {
    expect([0, 400, 45_000, 300_000, 3_723_000].map(goDurationString)).toEqual(['0s', '0s', '45s', '5m0s', '1h2m3s']);
    expect(parseGoDuration('87600h')).toBe(87600 * 3_600_000);
    expect(parseGoDuration('1h30m')).toBe(5_400_000);
    expect(parseGoDuration('1.5s')).toBe(1500);
    expect(() => parseGoDuration('10')).toThrow(/invalid duration "10"/);
    expect(() => parseGoDuration('')).toThrow(/invalid duration/);
  });

  it('humanizeTime as go-humanize', () => {
    const now = new Date('2024-01-01T00:00:00Z');
    const at = (ms: number) => humanizeTime(new Date(now.getTime() + ms), now);
    expect(at(0)).toBe('now');
    expect(at(-90_000)).toBe('1 minute ago');
    expect(at(3 * 3_600_000)).toBe('3 hours from now');
    expect(at(365 * 86_400_000)).toBe('1 year from now');
    expect(at(3650 * 86_400_000)).toBe('10 years from now');
  });

  it('Go file modes', () => {
    expect(fileModeString(0o644)).toBe('-rw-r--r--');
    expect(fileModeString((2 ** 31 + 0o755) >>> 0)).toBe('drwxr-xr-x');
    expect(fileModeString((2 ** 27 + 0o777) >>> 0)).toBe('Lrwxrwxrwx');
  });

  it('LineSlicer keeps lines whole per source', () => {
    const got: string[] = [];
    const s = new LineSlicer((src, line) => got.push(`${src}:${line}`));
    s.push('a', 'one\ntw');
    s.push('b', 'x\r\n');
    s.push('a', 'o\nthr');
    s.flush();
    expect(got).toEqual(['a:one', 'b:x', 'a:two', 'a:thr']);
  });

  it('sortedJSON sorts keys at every level, indents by 4', () => {
    expect(sortedJSON({ b: 1, a: { d: [1], c: null } })).toBe('{\n    "a": {\n        "c": null,\n        "d": [\n            1\n        ]\n    },\n    "b": 1\n}\n');
  });
});
