// Bundles src/ with esbuild into CommonJS, with the protos compiled into the module
// `bronze:protos` (image-builder/protos.ts). Two forms:
//
//   bundle.ts <entry.ts> <out.cjs>   one bundle of one entry (bronzectl, benchmarks)
//   bundle.ts --roles <outdir>       the node's binary: <outdir>/main.cjs (src/main.ts, which
//                                    picks the role) and <outdir>/<role>.cjs for every role in
//                                    src/roles.ts, each holding only what that role imports;
//                                    <outdir>/SHA256SUMS changes when any of them does
//
// A file is replaced only when its content changed, so make rebuilds what depends on it only
// then. Runs on the pinned Node (type stripping), through image-builder/bundle.sh.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { BUILD_DATA, BUILD_DATA_FILTER } from './build-data.ts';
import { shareInterop } from './shared-interop.ts';
import { longWithoutWasmPlugin } from './long-without-wasm.ts';
import { grpcLazyDnsPlugin } from './grpc-lazy-dns.ts';
import { NATIVE_ROLES, ROLE_MODULES, type Role } from '../src/roles.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function env(name: string): string {
  const v = process.env[name];
  if (v === undefined) throw new Error(`bundle.ts: ${name} is not set (run through image-builder/bundle.sh)`);
  return v;
}

/** The modules made at build time (image-builder/build-data.ts), in the bundles that import them. */
const buildDataPlugin: esbuild.Plugin = {
  name: 'bronze-build-data',
  setup(build) {
    build.onResolve({ filter: BUILD_DATA_FILTER }, (a) => ({ path: a.path, namespace: 'bronze-build-data' }));
    build.onLoad({ filter: /.*/, namespace: 'bronze-build-data' }, (a) => ({ contents: BUILD_DATA[a.path]!(), loader: 'js', resolveDir: ROOT }));
  },
};

/**
 * zod's English messages only. zod re-exports its ~50 locales as the namespace `z.locales`
 * (node_modules/zod/v4/locales/index.js), and since Bronze uses `z` as an object (src/lib/zod.ts)
 * esbuild cannot drop the ones nothing reads: about 300 KB, an eighth of machined's bundle, that
 * machined loaded at every start under QEMU/TCG. zod's own schemas import en.js directly, and
 * `z.locales.en` stays; no Bronze module sets another locale.
 */
export const ZOD_LOCALES_INDEX = /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/;
const zodEnglishPlugin: esbuild.Plugin = {
  name: 'zod-english-only',
  setup(build) {
    build.onLoad({ filter: ZOD_LOCALES_INDEX }, () => ({ contents: 'export { default as en } from "./en.js";\n', loader: 'js' }));
  },
};

function options(): esbuild.BuildOptions {
  return {
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['koffi'],
    logLevel: 'warning',
    minifySyntax: true,
    minifyWhitespace: true,
    // No keepNames: it wraps every function and class in a __name() call (0.5-0.8 s of
    // machined's self time in its boot profile; `make bench` saw no boot time change beyond its
    // noise, and the bundles are 5% smaller). Identifiers are not minified, so names stay as
    // written; a name esbuild changes to avoid a clash (encode3) is a local helper's, and the one
    // library check of a class name (asn1-schema's `constructor.name === "Sequence"`) sees
    // `var Sequence = class ...`, which keeps its name.
    keepNames: false,
    legalComments: 'none',
    write: false,
    plugins: [buildDataPlugin, zodEnglishPlugin, longWithoutWasmPlugin, grpcLazyDnsPlugin],
    define: {
      __BRONZE_VERSION__: JSON.stringify(env('BRONZE_VERSION')),
      __BRONZE_SHA__: JSON.stringify(env('BRONZE_SHA')),
      __BRONZE_BUILT__: JSON.stringify(env('BRONZE_BUILT')),
    },
  };
}

/** Writes `text` to `file` unless it already holds it; says so when it changed. */
function writeIfChanged(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === text) return;
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
  console.log(`bundle: ${path.relative(process.cwd(), file)} (${Buffer.byteLength(text)} bytes)`);
}

async function bundleOne(entry: string, out: string): Promise<void> {
  const r = await esbuild.build({ ...options(), entryPoints: [entry], outfile: out });
  writeIfChanged(out, shareInterop(r.outputFiles![0]!.text, path.basename(out)));
}

async function bundleRoles(outdir: string): Promise<void> {
  await bundleOne(path.join(ROOT, 'src/main.ts'), path.join(outdir, 'main.cjs'));
  const roles = Object.entries(ROLE_MODULES);
  await Promise.all(
    roles.map(async ([role, mod]) => {
      // A two-line entry per role: its main, wrapped by src/role-entry.ts.
      const native = NATIVE_ROLES.has(role as Role);
      const contents = `import { main } from './${mod}';\nimport { roleEntry } from './role-entry.ts';\nmodule.exports = roleEntry(main, ${native});\n`;
      const r = await esbuild.build({ ...options(), stdin: { contents, resolveDir: path.join(ROOT, 'src'), sourcefile: `${role}-entry.ts`, loader: 'ts' }, outfile: path.join(outdir, `${role}.cjs`) });
      writeIfChanged(path.join(outdir, `${role}.cjs`), shareInterop(r.outputFiles![0]!.text, `${role}.cjs`));
    }),
  );
  // Bundles of roles that no longer exist must not ride along into the binary.
  const keep = new Set(['main.cjs', ...roles.map(([r]) => `${r}.cjs`)]);
  for (const f of fs.readdirSync(outdir)) if (f.endsWith('.cjs') && !keep.has(f)) fs.rmSync(path.join(outdir, f));
  // One file that changes when any bundle does: what make depends on.
  const sums = [...keep].sort().map((f) => `${createHash('sha256').update(fs.readFileSync(path.join(outdir, f))).digest('hex')}  ${f}\n`);
  writeIfChanged(path.join(outdir, 'SHA256SUMS'), sums.join(''));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === '--roles' && args.length === 2) return bundleRoles(path.resolve(args[1]!));
  if (args.length === 2 && !args[0]!.startsWith('-')) return bundleOne(path.resolve(args[0]!), path.resolve(args[1]!));
  process.stderr.write('usage: bundle.ts <entry.ts> <out.cjs> | bundle.ts --roles <outdir>\n');
  process.exit(2);
}

main().catch((err: unknown) => {
  process.stderr.write(`bundle: ${(err as Error).message}\n`);
  process.exit(1);
});
