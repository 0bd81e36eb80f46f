// long.js as bundle.ts bundles it: it never touches WebAssembly, and its 64-bit arithmetic (the
// JavaScript fallback) gives the same answers.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { LONG_WASM, longWithoutWasm } from './long-without-wasm.ts';

const require = createRequire(import.meta.url);
// The build protobufjs requires (long's `require` condition: umd/index.js).
const file = require.resolve('long');

type LongClass = { fromString(s: string, unsigned?: boolean): { multiply(x: unknown): { toString(): string }; divide(x: unknown): { toString(): string } } };

function load(source: string): { Long: LongClass; touched: string[] } {
  const touched: string[] = [];
  const real = (globalThis as unknown as Record<string, object>).WebAssembly!;
  const WebAssembly = new Proxy(real, { get: (t, k) => (touched.push(String(k)), Reflect.get(t, k)) });
  const mod = { exports: {} as unknown };
  vm.runInNewContext(`(function (module, exports) {${source}\n})`, { WebAssembly, Uint8Array })(mod, mod.exports);
  return { Long: ((mod.exports as { default?: LongClass }).default ?? mod.exports) as LongClass, touched };
}

describe('longWithoutWasm', () => {
  it('leaves WebAssembly alone and computes as long.js with it does', () => {
    const source = fs.readFileSync(file, 'utf8');
    const withWasm = load(source);
    const without = load(longWithoutWasm(source, file));
    expect(withWasm.touched).toContain('Module');
    expect(without.touched).toEqual([]);
    for (const [a, b] of [['9007199254740993', '3'], ['-4611686018427387904', '7'], ['18446744073709551615', '255']] as const) {
      const unsigned = !a.startsWith('-');
      const x = without.Long.fromString(a, unsigned);
      const y = withWasm.Long.fromString(a, unsigned);
      expect(x.multiply(b).toString()).toBe(y.multiply(b).toString());
      expect(x.divide(b).toString()).toBe(y.divide(b).toString());
    }
  });

  it('refuses a long.js that does not load its module as expected', () => {
    expect(() => longWithoutWasm('var wasm = null;', 'long.js')).toThrow(new RegExp(`long.js: expected one '${LONG_WASM.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'`));
  });
});
