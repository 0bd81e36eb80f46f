// Generates the TypeScript types of every message in protos/ into src/contract/wire/, so the
// messages the code builds and reads are typed from the protos themselves and cannot drift from
// them. Run at build time (`make wire-types`, before the type check and the bundle); the unit test
// wire-types.test.ts fails when the committed files differ from what this generates.
//
// The generator is @grpc/proto-loader's proto-loader-gen-types (in node_modules already, as
// proto-loader is a dependency; protobufjs-cli, whose pbjs/pbts would be the other choice, is not
// installed). Its types describe messages exactly as src/contract/protos.ts converts them
// (LOADER_OPTIONS: field names as in the .proto, 64-bit integers as strings, enums as names,
// defaults filled, oneofs named): `Foo` is what may be sent, `Foo__Output` what is received.
// The types are type-only: no generated code runs.
//
//   tsx image-builder/wire-types.ts            write src/contract/wire/
//   tsx image-builder/wire-types.ts --check    exit 1 if src/contract/wire/ is not up to date
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROTO_FILES } from '../src/contract/proto-files.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const WIRE_DIR = path.join(ROOT, 'src', 'contract', 'wire');
const GENERATOR = path.join(ROOT, 'node_modules', '@grpc', 'proto-loader', 'build', 'bin', 'proto-loader-gen-types.js');

/** The same conversions as src/contract/protos.ts's LOADER_OPTIONS. */
const OPTIONS = ['--keepCase', '--longs=String', '--enums=String', '--defaults', '--oneofs', '--importFileExtension=.ts'];

/** Generates the types into `outDir` (which must not exist yet). */
export function generateWireTypes(outDir: string): void {
  execFileSync(process.execPath, [GENERATOR, ...OPTIONS, '-I', 'protos', '-O', outDir, ...PROTO_FILES], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  fs.writeFileSync(
    path.join(outDir, 'README.md'),
    '# Generated: do not edit\n\nTypes of the messages in `protos/`, made by `make wire-types` (image-builder/wire-types.ts).\n',
  );
}

/** Every file under dir, relative, sorted. */
export function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile()).sort();
}

/** The differences between two generated trees, as lines ('missing x', 'stale y', 'changed z'). */
export function compareTrees(want: string, have: string): string[] {
  const a = new Set(listFiles(want));
  const b = new Set(listFiles(have));
  const out: string[] = [];
  for (const f of a) {
    if (!b.has(f)) out.push(`missing ${f}`);
    else if (!fs.readFileSync(path.join(want, f)).equals(fs.readFileSync(path.join(have, f)))) out.push(`changed ${f}`);
  }
  for (const f of b) if (!a.has(f)) out.push(`stale ${f}`);
  return out;
}

function main(): void {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-wire-'));
  try {
    const out = path.join(tmp, 'wire');
    generateWireTypes(out);
    const diff = compareTrees(out, WIRE_DIR);
    if (process.argv.includes('--check')) {
      if (diff.length > 0) {
        console.error(`src/contract/wire is out of date (run make wire-types):\n  ${diff.join('\n  ')}`);
        process.exit(1);
      }
      return;
    }
    if (diff.length === 0) return;
    fs.rmSync(WIRE_DIR, { recursive: true, force: true });
    fs.cpSync(out, WIRE_DIR, { recursive: true });
    console.log(`src/contract/wire: ${diff.length} files changed`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
