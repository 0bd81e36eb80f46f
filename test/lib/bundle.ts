// The multi-call binary as a plain Node script, bundled once per test run into _out/test/
// (inside the repository, so that `koffi` resolves from node_modules).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

let built: string | undefined;

export function bundledBinary(): string {
  if (built) return built;
  const out = path.resolve('_out/test/bronze.cjs');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  execFileSync('image-builder/bundle.sh', ['src/main.ts', out], { stdio: 'pipe' });
  built = out;
  return out;
}
