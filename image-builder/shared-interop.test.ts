// shareInterop over real esbuild output (the options bundle.ts bundles with), run as the binary
// runs a bundle: one copy of an imported CommonJS module for all its importers, the same
// exports as before, and a fresh copy after a require cycle handed out a partial one.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { createRequire } from 'node:module';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shareInterop } from './shared-interop.ts';

let dir: string;
const files: Record<string, string> = {
  // Two ESM importers of a built-in and of a CommonJS package, default and named imports.
  'a.mjs': `import fs from 'node:fs'; import * as lib from './lib.cjs'; export const a = { fs, lib, exists: fs.existsSync };`,
  'b.mjs': `import fs, { existsSync } from 'node:fs'; import * as lib from './lib.cjs'; export const b = { fs, lib, existsSync };`,
  'lib.cjs': `exports.one = 1; exports.two = () => 2;`,
  // CommonJS requiring an ESM module twice (esbuild: __toCommonJS at each require).
  'esm-dep.mjs': `export const x = 'x'; export function y() { return 'y'; }`,
  'cjs-user.cjs': `const p = require('./esm-dep.mjs'); const q = require('./esm-dep.mjs'); module.exports = { p, q };`,
  // A cycle: cyc.cjs, while its own code runs, loads early.mjs, which imports cyc.cjs (partial).
  'cyc.cjs': `exports.first = 1; exports.seenEarly = require('./early.mjs').seen; exports.second = 2;`,
  'early.mjs': `import * as cyc from './cyc.cjs'; export const seen = Object.keys(cyc).filter((k) => k !== 'default').sort();`,
  'late.mjs': `import * as cyc from './cyc.cjs'; export const late = Object.keys(cyc).filter((k) => k !== 'default').sort();`,
  'entry.mjs': `
    import { a } from './a.mjs'; import { b } from './b.mjs'; import { early } from './early-entry.mjs'; import { late } from './late.mjs';
    import users from './cjs-user.cjs';
    export { a, b, users, early, late };`,
  'early-entry.mjs': `import cyc from './cyc.cjs'; export const early = cyc.seenEarly;`,
  // Top-level names the helpers' parameters have: esbuild renames those (mod2, target2, ...).
  'renamed.mjs': `
    import { a } from './a.mjs'; import { b } from './b.mjs'; import users from './cjs-user.cjs';
    export const mod = 'top mod'; export const target = 'top target'; export const isNodeMode = 'top isNodeMode';
    export { a, b, users };`,
};

async function bundle(entry = 'entry.mjs'): Promise<string> {
  const r = await esbuild.build({
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minifySyntax: true,
    minifyWhitespace: true,
    write: false,
    entryPoints: [path.join(dir, entry)],
    outfile: path.join(dir, 'out.cjs'),
    logLevel: 'silent',
  });
  return r.outputFiles[0]!.text;
}

function run(text: string): Record<string, any> {
  const fn = new vm.Script(`(function (exports, require, module) {${text}\n})`).runInThisContext();
  const mod = { exports: {} as Record<string, any> };
  fn(mod.exports, createRequire(path.join(dir, 'out.cjs')), mod);
  return mod.exports;
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shared-interop-'));
  for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('shareInterop', () => {
  it('gives every importer one shared copy, with the same exports as esbuild’s own', async () => {
    const text = await bundle();
    const before = run(text);
    const after = run(shareInterop(text, 'test.cjs'));
    // esbuild alone: a copy per importer.
    expect(before.a.lib).not.toBe(before.b.lib);
    expect(before.users.p).not.toBe(before.users.q);
    // Shared: the same object for both, holding the same things.
    expect(after.a.lib).toBe(after.b.lib);
    expect(after.users.p).toBe(after.users.q);
    expect(after.a.fs).toBe(fs);
    expect(after.b.fs).toBe(fs);
    expect(after.b.existsSync).toBe(fs.existsSync);
    expect(after.a.lib.one).toBe(1);
    expect(after.a.lib.two()).toBe(2);
    expect(after.users.p.x).toBe('x');
    expect(after.users.p.y()).toBe('y');
    expect(Object.keys(after.a.lib).sort()).toEqual(Object.keys(before.a.lib).sort());
    expect(Object.keys(after.users.p).sort()).toEqual(Object.keys(before.users.p).sort());
  });

  it('hands out a fresh copy once a module imported in a require cycle has finished', async () => {
    const after = run(shareInterop(await bundle(), 'test.cjs'));
    // early.mjs saw cyc.cjs half done; late.mjs, after it finished, sees all of it.
    expect(after.early).toEqual(['first']);
    expect(after.late).toEqual(['first', 'second', 'seenEarly']);
  });

  it('takes the helpers with their parameters renamed (a top-level mod or target in the bundle), keeping those names', async () => {
    const text = await bundle('renamed.mjs');
    expect(text).toMatch(/var __toESM=\(mod2,isNodeMode2,target2\)=>/);
    expect(text).toMatch(/__toCommonJS=mod2=>/);
    const shared = shareInterop(text, 'renamed.cjs');
    expect(shared).toMatch(/var __toESMCopy=\(mod2,isNodeMode2,target2\)=>/);
    expect(shared).toMatch(/__toCommonJSCopy=mod2=>/);
    const after = run(shared);
    expect(after.a.lib).toBe(after.b.lib);
    expect(after.users.p).toBe(after.users.q);
    expect(after.a.fs).toBe(fs);
    expect(after.a.lib.two()).toBe(2);
    expect(after.users.p.y()).toBe('y');
    expect([after.mod, after.target, after.isNodeMode]).toEqual(['top mod', 'top target', 'top isNodeMode']);
  });

  it('leaves a bundle without the helpers as it is, and refuses helpers it does not know', async () => {
    expect(shareInterop('console.log(1);', 'plain.cjs')).toBe('console.log(1);');
    const text = await bundle();
    const other = text.replace('var __toESM=(mod,isNodeMode,target)=>', 'var __toESM=(m,n,t)=>');
    expect(() => shareInterop(other, 'other.cjs')).toThrow(/other\.cjs: 'var __toESM=\(mod,isNodeMode,target\)=>' found 0 times/);
  });
});
