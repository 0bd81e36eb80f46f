// The multi-call binary as plain Node scripts (main.cjs and a bundle per role), bundled once per
// test run into _out/test/roles/ (inside the repository, so that `koffi` resolves from node_modules).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

let built: string | undefined;

export function bundledBinary(): string {
  if (built) return built;
  const dir = path.resolve('_out/test/roles');
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('image-builder/bundle.sh', ['--roles', dir], { stdio: 'pipe' });
  const out = path.join(dir, 'main.cjs');
  built = out;
  return out;
}
