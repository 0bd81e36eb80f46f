// Makes the V8 code cache of every role bundle, for the single executable to compile its role
// from (src/main.ts), and the list of Node built-in modules its module code loads (<role>.builtins). Each bundle is compiled exactly as the binary compiles it and its module
// code is run (the role's main is not started), so that the cache holds the bytecode of every
// function that runs while the modules load, not only the top level. V8 accepts a cache only
// from the same V8 build, flags and architecture: the caches are made by the pinned runtime the
// binary is made of (--runtime), under QEMU user emulation (--emulator, e.g. qemu-aarch64) when
// that runtime is for another architecture than the build host's.
// usage: node image-builder/code-cache.ts [--runtime <node>] [--emulator <qemu-user>] <roles-dir> <role>...
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { CODE_CACHE_SEED_FLAG, CODE_CACHE_V8_FLAGS, assertAsciiBundle, roleAsset, roleBuiltinsAsset, roleCacheAsset, wrapRoleSource, type RoleFunction } from '../src/lib/role-source.ts';

// Reproducible caches need a fixed hash seed on the command line (see CODE_CACHE_SEED_FLAG), no
// baseline compilation on background threads (measured: without it one cache in a few differs
// from run to run; the flag is outside V8's flag hash, so the binary need not set it), and the
// same environment every time: module code that runs here reads it (FORCE_COLOR, which vitest
// sets, changed the caches), and so does whether stdout is a terminal. So the work is done by a
// child with a fixed environment and pipes for its output.
const BUILD_FLAGS = [CODE_CACHE_SEED_FLAG, '--no-concurrent-sparkplug'];
const CHILD = 'BRONZE_CODE_CACHE_CHILD';
if (process.env[CHILD] !== '1') {
  const args = process.argv.slice(2);
  const option = (name: string): string | undefined => {
    const i = args.indexOf(name);
    if (i < 0) return undefined;
    const value = args[i + 1];
    if (value === undefined || value.startsWith('--')) {
      process.stderr.write(`code-cache: ${name} needs a value\n`);
      process.exit(2);
    }
    args.splice(i, 2);
    return value;
  };
  const runtime = option('--runtime') ?? process.execPath;
  const emulator = option('--emulator');
  const command = emulator ? [emulator, runtime] : [runtime];
  const r = spawnSync(command[0]!, [...command.slice(1), ...BUILD_FLAGS, '--disable-warning=ExperimentalWarning', process.argv[1]!, ...args], {
    env: { [CHILD]: '1', LANG: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  if (r.error) process.stderr.write(`code-cache: ${command.join(' ')}: ${r.error.message}\n`);
  process.exit(r.status ?? 1);
}

const [dir, ...roles] = process.argv.slice(2);
if (!dir || roles.length === 0) {
  process.stderr.write('usage: code-cache.ts <roles-dir> <role>...\n');
  process.exit(2);
}
// The rest of the flags are set as the binary sets them (src/lib/role-source.ts), in the running
// isolate: V8's flag hash, which the cache must match, came out different when they were given
// on the command line instead.
v8.setFlagsFromString(CODE_CACHE_V8_FLAGS.join(' '));
for (const role of roles) {
  const file = path.join(dir, roleAsset(role));
  // The file name the binary gives it (src/main.ts): a path here would make the cache differ by directory.
  const text = fs.readFileSync(file, 'utf8');
  assertAsciiBundle(text, file);
  const script = new vm.Script(wrapRoleSource(text), { filename: roleAsset(role) });
  const fn = script.runInThisContext() as RoleFunction;
  const mod = { exports: {} };
  // The Node built-in modules the bundle's module code loads, in the order it loads them: the
  // binary loads them before it sets the cache's flags (src/lib/role-source.ts).
  const builtins: string[] = [];
  const base = createRequire(path.resolve(file));
  const recording = Object.assign((id: string) => {
    if (isBuiltin(id) && !builtins.includes(id)) builtins.push(id);
    return base(id) as unknown;
  }, base) as NodeJS.Require;
  fn(mod.exports, recording, mod, file, path.dirname(file));
  if (typeof (mod.exports as { start?: unknown }).start !== 'function') throw new Error(`${file}: no start() exported`);
  const cache = script.createCachedData();
  fs.writeFileSync(path.join(dir, roleCacheAsset(role)), cache);
  fs.writeFileSync(path.join(dir, roleBuiltinsAsset(role)), builtins.map((b) => `${b}\n`).join(''));
}
