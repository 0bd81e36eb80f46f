#!/usr/bin/env node
// `bronzectl` from the source tree (package.json "bin"), on any Node >= 20.
//
// It runs two esbuild bundles in _out/build/: bronzectl-front.cjs (src/bronzectl/front.ts: the
// command tree alone, which answers help, usage errors, `version --client` and `completion`
// itself) and, for any other command, bronzectl.cjs beside it (src/bronzectl/main.ts: the whole
// CLI), which the front loads. Both are built first with image-builder/bundle.sh when missing or
// older than any file under src/ or protos/, the bundler or package-lock.json. Bundles rather
// than tsx: the sources import the compiled protos, which the bundler provides and plain Node
// loaders do not, and a bundle starts in a fraction of the time. Where Node has it (>= 22.1), V8's
// compile cache keeps their compiled code between runs. Without a source tree the bundles are
// used as they are; $BRONZECTL_BUNDLE names a whole-CLI bundle to run instead (no front).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import module, { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, '_out', 'build');
const bundles = [
  { entry: path.join(root, 'src', 'bronzectl', 'main.ts'), out: path.join(dir, 'bronzectl.cjs') },
  // The front loads the whole CLI from beside itself.
  { entry: path.join(root, 'src', 'bronzectl', 'front.ts'), out: path.join(dir, 'bronzectl-front.cjs') },
];
const INPUTS = ['src', 'protos', 'package-lock.json', 'image-builder/bundle.ts', 'image-builder/protos.ts'];

/** The newest mtime of `p` and, for a directory, of everything under it (0: no such file). */
function newestMtime(p) {
  const st = statSync(p, { throwIfNoEntry: false });
  if (!st) return 0;
  let max = st.mtimeMs;
  if (!st.isDirectory()) return max;
  for (const e of readdirSync(p, { withFileTypes: true })) {
    const child = `${p}/${e.name}`;
    max = Math.max(max, e.isDirectory() ? newestMtime(child) : (statSync(child, { throwIfNoEntry: false })?.mtimeMs ?? 0));
  }
  return max;
}

function stale() {
  if (!bundles.every((b) => existsSync(b.out))) return true;
  if (!existsSync(bundles[0].entry)) return false;
  const built = Math.min(...bundles.map((b) => statSync(b.out).mtimeMs));
  return INPUTS.some((p) => newestMtime(path.join(root, p)) > built);
}

module.enableCompileCache?.();
const require = createRequire(import.meta.url);

if (process.env.BRONZECTL_BUNDLE) {
  require(path.resolve(process.env.BRONZECTL_BUNDLE)).start();
} else {
  if (stale()) {
    for (const { entry, out } of bundles) {
      const r = spawnSync('bash', [path.join(root, 'image-builder', 'bundle.sh'), entry, out], { stdio: ['ignore', 'ignore', 'inherit'] });
      if (r.status !== 0) {
        process.stderr.write(`bronzectl: building ${out} failed${r.error ? `: ${r.error.message}` : ''}\n`);
        process.exit(1);
      }
      // bundle.sh leaves an unchanged bundle untouched: mark it fresh so the next run skips the build.
      const now = new Date();
      utimesSync(out, now, now);
    }
  }
  require(bundles[1].out);
}
