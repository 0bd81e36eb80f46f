// The house's rules, checked on the import graph esbuild sees (runtime imports only: `import
// type` is erased, as it is from the binary):
// - no import circles, and none either when `import type` counts (a reader follows those too);
// - no daemon imports another daemon's files;
// - the lower rooms (contract/, lib/, state/, disk/) import no daemon, and lib/, the lowest,
//   none of the others (types included);
// - test aids (testing.ts, testing-*.ts) are imported by tests only;
// - no daemon but machined reaches the configuration validator (config/validate.ts, schema.ts,
//   kinds*.ts) or any file that imports zod (issue 10: a daemon loads no code it does not use);
// - no file outside src/config/ reads the configuration's documents raw: settings come through
//   the accessors (src/config/accessors/, one resolver per setting);
// - no source file over 500 lines, except pure data tables, codecs and generated code.
import fs from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

const DAEMONS = ['machined', 'apid', 'trustd', 'networkd', 'timed', 'udevd'];
const LOWER = ['contract', 'lib', 'state', 'disk'];

/**
 * Type circles still being untied, each as a file every circle of it goes through: issue 49's
 * bronzectl commands through lazy.ts. When they are gone the test says so: delete the entry.
 */
const TYPE_CIRCLES_LEFT: Record<string, string> = {};

/** Files allowed past 500 lines: what they are, and why. */
const LONG_FILES: Record<string, string> = {
  'src/networkd/netlink.ts': 'codec: rtnetlink message layouts and attribute tables',
};

let graph: Map<string, string[]>;
/** The same files' imports as the source has them, `import type` included. */
let typeGraph: Map<string, string[]>;
/** The source files that import zod. */
let zodUsers: Set<string>;

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (p.endsWith('.ts') && !p.endsWith('.test.ts') && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Every `src/` file a source file names in an import or export, `import type` and `import()` included. */
function sourceImports(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  return importedFiles.filter((i) => i.fileName.startsWith('.')).map((i) => path.normalize(path.join(path.dirname(file), i.fileName)));
}

/** The import circles of a graph, each as its files from where it was entered back to there. */
function circles(g: Map<string, string[]>): string[] {
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const d of g.get(f) ?? []) {
      if (state.get(d) === 'open') cycles.push([...stack.slice(stack.indexOf(d)), d].join(' -> '));
      else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of g.keys()) if (!state.has(f)) visit(f);
  return cycles;
}

/** The room a source file lives in: its first directory under src/ (or the file itself). */
const room = (file: string): string => file.split('/')[1]!.replace(/\.ts$/, '');
const generated = (file: string) => file.startsWith('src/contract/wire/');

beforeAll(async () => {
  const result = await esbuild.build({
    entryPoints: sources('src'),
    bundle: true,
    write: false,
    metafile: true,
    outdir: '/nonexistent',
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
    loader: { '.proto': 'text' },
  });
  graph = new Map();
  zodUsers = new Set();
  const files = sources('src');
  typeGraph = new Map(files.map((f) => [f, sourceImports(f).filter((d) => files.includes(d))]));
  for (const [file, input] of Object.entries(result.metafile.inputs)) {
    if (!file.startsWith('src/')) continue;
    graph.set(file, input.imports.filter((i) => !i.external && i.path.startsWith('src/')).map((i) => i.path));
    // zod itself, or src/lib/zod.ts (zod configured once, for every user).
    if (input.imports.some((i) => (i.external && (i.path === 'zod' || i.path.startsWith('zod/'))) || i.path === 'src/lib/zod.ts')) zodUsers.add(file);
  }
}, 60_000);

describe('the import graph', () => {
  it('sees the whole tree', () => {
    expect(graph.size).toBeGreaterThan(200);
    expect(graph.get('src/machined/node.ts')?.length).toBeGreaterThan(5);
  });

  it('has no circles', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('has no circles when type imports count (e.g. lib/native.ts <-> lib/sea-blob.ts was one)', () => {
    expect(typeGraph.get('src/lib/native.ts'), 'the type graph sees imports').toContain('src/lib/sea-blob.ts');
    const all = circles(typeGraph);
    expect(all.filter((c) => !Object.keys(TYPE_CIRCLES_LEFT).some((f) => c.split(' -> ').includes(f)))).toEqual([]);
    for (const f of Object.keys(TYPE_CIRCLES_LEFT)) expect(all.some((c) => c.split(' -> ').includes(f)), `no type circle through ${f} is left: delete it from TYPE_CIRCLES_LEFT`).toBe(true);
  });

  it('keeps lib/ the lowest room: it imports nothing of contract/, state/ or disk/, types included', () => {
    const bad = [...typeGraph].flatMap(([file, deps]) => (room(file) === 'lib' ? deps.filter((d) => LOWER.includes(room(d)) && room(d) !== 'lib').map((d) => `${file} -> ${d}`) : []));
    expect(bad).toEqual([]);
  });

  it('keeps each daemon to its own room, and the lower rooms to themselves', () => {
    const bad: string[] = [];
    for (const [file, deps] of graph) {
      const from = room(file);
      for (const d of deps) {
        const to = room(d);
        if (DAEMONS.includes(from) && DAEMONS.includes(to) && from !== to) bad.push(`${file} -> ${d} (a daemon into another's room)`);
        if (LOWER.includes(from) && DAEMONS.includes(to)) bad.push(`${file} -> ${d} (${from}/ imports a daemon)`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('keeps the test aids out of the product: only tests import testing.ts and testing-*.ts', () => {
    const aid = /\/testing(-[a-z]+)?\.ts$/;
    const bad = [...graph].flatMap(([file, deps]) => (aid.test(file) ? [] : deps.filter((d) => aid.test(d)).map((d) => `${file} -> ${d}`)));
    expect(bad).toEqual([]);
    expect([...graph.keys()].filter((f) => aid.test(f)).length, 'the aids are in the graph (as entry points)').toBeGreaterThan(3);
  });

  it('keeps the configuration validator and zod in machined: no other daemon reaches them', () => {
    const validator = (f: string) => /^src\/config\/(validate|schema|kinds(-[a-z]+)?)\.ts$/.test(f) || zodUsers.has(f);
    expect(zodUsers.has('src/config/schema.ts'), 'the rule sees zod').toBe(true);
    expect(validator('src/config/validate.ts') && validator('src/config/kinds-network.ts')).toBe(true);
    const bad: string[] = [];
    for (const daemon of DAEMONS.filter((d) => d !== 'machined')) {
      // Breadth first from the daemon's main, keeping how each file was reached.
      const via = new Map<string, string | undefined>([[`src/${daemon}/main.ts`, undefined]]);
      const queue = [`src/${daemon}/main.ts`];
      expect(graph.has(queue[0]!), queue[0]).toBe(true);
      while (queue.length) {
        const f = queue.shift()!;
        if (validator(f)) {
          const chain: string[] = [];
          for (let c: string | undefined = f; c; c = via.get(c)) chain.unshift(c);
          bad.push(`${daemon}: ${chain.join(' -> ')}`);
          continue;
        }
        for (const d of graph.get(f) ?? []) if (!via.has(d)) via.set(d, f), queue.push(d);
      }
    }
    expect(bad).toEqual([]);
    // machined is where it lives.
    expect(graph.get('src/machined/config/parsed.ts')).toContain('src/config/validate.ts');
  });

  it('reads the configuration through its accessors only: no raw reads outside src/config/', () => {
    // The typed v1alpha1 document's fields, the documents as data, narrowing on a kind.
    const raw = [/\bv1alpha1\??\.(machine|cluster)\b/, /\.data\??\.(v1alpha1|documents)\b/, /\bspec\??\.documents\b/, /(kind\s*===\s*|case\s+)'[A-Za-z0-9]+Config'/, /\bsystemDiskEncryption\??\./];
    /** Files that handle the documents without reading a setting, and why. */
    const allowed: Record<string, string> = {
      'src/contract/resources/machine-config-text.ts': 'writes the documents back out as the configuration text',
      'src/bronzectl/commands/machineconfig-impl.ts': 'configStream: a node\'s documents back to YAML for edit and patch',
    };
    const bad = sources('src')
      .filter((f) => !f.startsWith('src/config/') && !generated(f) && !(f in allowed))
      .flatMap((f) =>
        fs
          .readFileSync(f, 'utf8')
          .split('\n')
          // Comments and template strings (messages name the fields they are about) are not reads.
          .map((line, i) => [line.replace(/^\s*(\/\/|\*|\/\*).*$/, '').replace(/\s\/\/ .*$/, '').replace(/`[^`]*`/g, '``'), i + 1] as const)
          .filter(([line]) => raw.some((r) => r.test(line)))
          .map(([line, n]) => `${f}:${n}: ${line.trim()}`),
      );
    expect(bad).toEqual([]);
    for (const f of Object.keys(allowed)) expect(fs.existsSync(f), f).toBe(true);
  });

  it('has no source file over 500 lines but the data tables and codecs named here', () => {
    const long = sources('src')
      .filter((f) => !generated(f))
      .map((f) => [f, fs.readFileSync(f, 'utf8').split('\n').length] as const)
      .filter(([f, n]) => n > 500 && !(f in LONG_FILES))
      .map(([f, n]) => `${f}: ${n} lines`);
    expect(long).toEqual([]);
    // A file that shrank under the bar leaves the list.
    for (const f of Object.keys(LONG_FILES)) expect(fs.readFileSync(f, 'utf8').split('\n').length, f).toBeGreaterThan(500);
  });
});
