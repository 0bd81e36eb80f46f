#!/usr/bin/env node
// `bronzectl` from the source tree (package.json "bin"), on any Node >= 20.
//
// It runs the esbuild bundle of src/bronzectl/main.ts at _out/build/bronzectl.cjs (override with
// $BRONZECTL_BUNDLE), building it first with image-builder/bundle.sh when it is missing or older
// than any file under src/ or protos/ or package-lock.json. A bundle rather than tsx: the sources
// import .proto files as text, which the bundler handles and plain Node loaders do not, and a
// bundle starts in a fraction of the time. Without a source tree the bundle is used as it is.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bundle = process.env.BRONZECTL_BUNDLE || path.join(root, '_out', 'build', 'bronzectl.cjs');

function newestMtime(p) {
  let st;
  try {
    st = statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const name of readdirSync(p)) max = Math.max(max, newestMtime(path.join(p, name)));
  return max;
}

function stale() {
  if (!existsSync(bundle)) return true;
  if (!existsSync(path.join(root, 'src', 'bronzectl', 'main.ts'))) return false;
  const built = statSync(bundle).mtimeMs;
  return ['src', 'protos', 'package-lock.json'].some((p) => newestMtime(path.join(root, p)) > built);
}

if (stale()) {
  const r = spawnSync('bash', [path.join(root, 'image-builder', 'bundle.sh'), path.join(root, 'src', 'bronzectl', 'main.ts'), bundle], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0) {
    process.stderr.write(`bronzectl: building ${bundle} failed${r.error ? `: ${r.error.message}` : ''}\n`);
    process.exit(1);
  }
  // bundle.sh leaves an unchanged bundle untouched: mark it fresh so the next run skips the build.
  const now = new Date();
  utimesSync(bundle, now, now);
}

createRequire(import.meta.url)(bundle);
