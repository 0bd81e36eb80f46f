import inspector from 'node:inspector';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  DISK_MAGIC,
  SLOT_BYTES,
  formatBootFunction,
  formatSlot,
  functionKey,
  locateBootFunctions,
  parseBootFunctions,
  ranFunctions,
  readSlot,
  slotOffset,
  type CoveredFunction,
} from './boot-functions.ts';

/** The best-effort coverage V8 itself gives for the script `url`, as a recording boot asks for it. */
function coverage(url: string): CoveredFunction[] {
  const session = new inspector.Session();
  session.connect();
  const post = (method: string): unknown => {
    let out: unknown;
    session.post(method, {}, (err, res) => {
      if (err) throw err;
      out = res;
    });
    return out;
  };
  try {
    post('Profiler.enable');
    const cov = post('Profiler.getBestEffortCoverage') as { result: { url: string; functions: CoveredFunction[] }[] };
    return cov.result.find((s) => s.url === url)!.functions;
  } finally {
    session.disconnect();
  }
}

const SOURCE = [
  '(function () {',
  '  function outer(x) {',
  '    function inner(y) { return y + 1; }',
  '    function unused(z) { return z * 2; }',
  '    return inner(x);',
  '  }',
  '  function never() { return 0; }',
  '  globalThis.__bootFunctionsTest = outer;',
  '})',
].join('\n');

describe('boot functions', () => {
  it('keys a function by its text, not where it is', () => {
    const text = 'function f() { return 1; }';
    expect(functionKey(`;;${text}`, 2, 2 + text.length)).toBe(functionKey(`var a = 1;\n${text}`, 11, 11 + text.length));
    expect(functionKey(text, 0, text.length)).toMatch(/^[0-9a-f]{16}$/);
    expect(functionKey(text, 0, text.length)).not.toBe(functionKey('function f() { return 2; }', 0, text.length));
  });

  it('records the functions a real V8 ran, with the ones around them, outer first', () => {
    const url = 'boot-functions-test.js';
    (new vm.Script(SOURCE, { filename: url }).runInThisContext() as () => void)();
    (globalThis as { __bootFunctionsTest?: (x: number) => number }).__bootFunctionsTest!(1);
    const covered = coverage(url);
    const recorded = ranFunctions(SOURCE, covered);
    const range = (name: string) => covered.find((f) => f.functionName === name)?.ranges[0];
    const keyOf = (name: string) => {
      const r = range(name);
      return r && recorded.find((f) => f.key === functionKey(SOURCE, r.startOffset, r.endOffset))?.key;
    };
    // outer and inner ran; unused and never did not.
    expect(keyOf('outer')).toBeDefined();
    expect(keyOf('inner')).toBeDefined();
    expect(keyOf('unused')).toBeUndefined();
    expect(keyOf('never')).toBeUndefined();
    const inner = recorded.find((f) => f.key === keyOf('inner'))!;
    expect(inner.parent).toBe(keyOf('outer'));
    expect(inner.offset).toBe(range('inner')!.startOffset - range('outer')!.startOffset);
    // Outer before inner.
    expect(recorded.findIndex((f) => f.key === keyOf('outer'))).toBeLessThan(recorded.indexOf(inner));
  });

  it('keeps the functions around one that ran even when V8 counts them 0 (flushed)', () => {
    const source = 'xx function a() { function b() { function c() {} } } function d() {}';
    const fn = (start: number, end: number, count: number): CoveredFunction => ({ functionName: '', ranges: [{ startOffset: start, endOffset: end, count }] });
    const a = [source.indexOf('function a'), source.indexOf(' function d')];
    const b = [source.indexOf('function b'), source.indexOf(' }', source.indexOf('function c')) + 2];
    const c = [source.indexOf('function c'), source.indexOf('function c') + 'function c() {}'.length];
    const d = [source.indexOf('function d'), source.length];
    const recorded = ranFunctions(source, [fn(0, source.length, 1), fn(a[0]!, a[1]!, 0), fn(b[0]!, b[1]!, 0), fn(c[0]!, c[1]!, 3), fn(d[0]!, d[1]!, 0)]);
    expect(recorded.map((f) => f.offset)).toEqual([a[0], b[0]! - a[0]!, c[0]! - b[0]!]);
    expect(recorded.map((f) => f.parent)).toEqual(['-', recorded[0]!.key, recorded[1]!.key]);
  });

  it('parses a recorded list, naming a bad line', () => {
    const text = '# apid\n0123456789abcdef - 10 20\nfedcba9876543210 0123456789abcdef 3 7\n\n';
    expect(parseBootFunctions(text, 'apid.txt')).toEqual([
      { key: '0123456789abcdef', parent: '-', offset: 10, length: 20 },
      { key: 'fedcba9876543210', parent: '0123456789abcdef', offset: 3, length: 7 },
    ]);
    expect(parseBootFunctions(text, 'apid.txt').map(formatBootFunction).join('\n')).toBe('0123456789abcdef - 10 20\nfedcba9876543210 0123456789abcdef 3 7');
    expect(() => parseBootFunctions('# x\n0123456789abcdef\n', 'apid.txt')).toThrow('apid.txt:2: "0123456789abcdef" is not "<key> <key of the function around it, or -> <offset in it> <length>"');
  });

  it('finds listed functions by key, nested ones through the function around them, and skips changed ones', () => {
    const recordedSource = 'function a() { function b() { return 1; } }';
    const a = { start: 0, end: recordedSource.length };
    const b = { start: recordedSource.indexOf('function b'), end: recordedSource.indexOf(' }', recordedSource.indexOf('return')) + 2 };
    const recorded = [
      { key: functionKey(recordedSource, a.start, a.end), parent: '-', offset: 0, length: a.end - a.start },
      { key: functionKey(recordedSource, b.start, b.end), parent: functionKey(recordedSource, a.start, a.end), offset: b.start, length: b.end - b.start },
    ];
    // The same functions moved by an edit before them: a is listed (its parent ran), b is not yet.
    const moved = `var edit = 1;\n${recordedSource}`;
    const listed = new Map([[recorded[0]!.key, [14]]]);
    expect(locateBootFunctions(moved, recorded, listed)).toEqual({ starts: [14, 14 + b.start], missing: 0 });
    // b's text changed, and so a's, which holds it: neither is found; both compile lazily, as before.
    const changed = moved.replace('return 1;', 'return 2;');
    const changedListed = new Map<string, number[]>();
    expect(locateBootFunctions(changed, recorded, changedListed)).toEqual({ starts: [], missing: 2 });
  });

  it('writes and reads a role slot on the recording disk', () => {
    const disk = Buffer.alloc(7 * SLOT_BYTES);
    disk.write(DISK_MAGIC, 0, 'latin1');
    formatSlot('apid', ['0123456789abcdef - 1 2', 'fedcba9876543210 0123456789abcdef 3 4']).copy(disk, slotOffset('apid'));
    expect(readSlot(disk, 'apid')).toEqual(['0123456789abcdef - 1 2', 'fedcba9876543210 0123456789abcdef 3 4']);
    expect(readSlot(disk, 'machined')).toBeUndefined();
    expect(slotOffset('machined')).toBe(SLOT_BYTES);
    expect(() => slotOffset('bronzectl')).toThrow('bronzectl: not a role');
    expect(() => formatSlot('apid', Array(Math.ceil(SLOT_BYTES / 20)).fill('0123456789abcdef - 1 2'))).toThrow(/do not fit/);
  });
});
