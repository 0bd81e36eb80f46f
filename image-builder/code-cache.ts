// Makes the V8 code cache of every role bundle, for the single executable to compile its role
// from (src/main.ts), and the list of Node built-in modules its module code loads (<role>.builtins). Each bundle is compiled exactly as the binary compiles it and its module
// code is run (the role's main is not started), so that the cache holds the bytecode of every
// function that runs while the modules load, not only the top level. V8 accepts a cache only
// from the same V8 build, flags and architecture: the caches are made by the pinned runtime the
// binary is made of (--runtime), under QEMU user emulation (--emulator, e.g. qemu-aarch64) when
// that runtime is for another architecture than the build host's.
// With --boot-functions <dir>, the functions a real boot ran (<dir>/<role>.txt, recorded by
// image-builder/boot-functions.ts; src/lib/boot-functions.ts says why) are compiled too before
// the cache is made, so that the boot finds their bytecode in the cache instead of compiling them.
// usage: node image-builder/code-cache.ts [--runtime <node>] [--emulator <qemu-user>] [--boot-functions <dir>] <roles-dir> <role>...
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import inspector from 'node:inspector';
import { functionKey, locateBootFunctions, parseBootFunctions, type BootFunction, type CoveredFunction } from '../src/lib/boot-functions.ts';
import { CODE_CACHE_SEED_FLAG, CODE_CACHE_V8_FLAGS, assertAsciiBundle, roleAsset, roleBuiltinsAsset, roleCacheAsset, wrapRoleSource, type RoleFunction } from '../src/lib/role-source.ts';

// Reproducible caches need a fixed hash seed on the command line (see CODE_CACHE_SEED_FLAG), no
// baseline compilation on background threads (measured: without it one cache in a few differs
// from run to run; the flag is outside V8's flag hash, so the binary need not set it), and the
// same environment every time: module code that runs here reads it (FORCE_COLOR, which vitest
// sets, changed the caches), and so does whether stdout is a terminal. So the work is done by a
// child with a fixed environment and pipes for its output.
const BUILD_FLAGS = [CODE_CACHE_SEED_FLAG, '--no-concurrent-sparkplug', '--single-threaded-gc'];
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
  const bootFunctions = option('--boot-functions');
  const command = emulator ? [emulator, runtime] : [runtime];
  const [dir, ...roles] = args;
  if (!dir || roles.length === 0) {
    process.stderr.write('usage: code-cache.ts [--runtime <node>] [--emulator <qemu-user>] [--boot-functions <dir>] <roles-dir> <role>...\n');
    process.exit(2);
  }
  // One child per role: the inspector a role's boot functions are compiled through leaves state
  // in the isolate that made the next role's cache differ from build to build.
  for (const role of roles) {
    const r = spawnSync(command[0]!, [...command.slice(1), ...BUILD_FLAGS, '--disable-warning=ExperimentalWarning', process.argv[1]!, ...(bootFunctions ? ['--boot-functions', bootFunctions] : []), dir, role], {
      env: { [CHILD]: '1', LANG: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    process.stdout.write(r.stdout ?? '');
    process.stderr.write(r.stderr ?? '');
    if (r.error) process.stderr.write(`code-cache: ${command.join(' ')}: ${r.error.message}\n`);
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
  process.exit(0);
}

const childArgs = process.argv.slice(2);
let bootFunctionsDir: string | undefined;
const bf = childArgs.indexOf('--boot-functions');
if (bf >= 0) [, bootFunctionsDir] = childArgs.splice(bf, 2);
const [dir, ...roles] = childArgs;
if (!dir || roles.length === 0) {
  process.stderr.write('usage: code-cache.ts <roles-dir> <role>...\n');
  process.exit(2);
}
// The rest of the flags are set as the binary sets them (src/lib/role-source.ts), in the running
// isolate: V8's flag hash, which the cache must match, came out different when they were given
// on the command line instead.
v8.setFlagsFromString(CODE_CACHE_V8_FLAGS.join(' '));
// No bytecode flushing and so no ageing while the caches are made: a collection (whose moment
// concurrent marking makes vary) must neither drop what was compiled nor leave it a different
// age in the cache, or the caches would differ from build to build.
v8.setFlagsFromString('--no-flush-bytecode');
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
  const listFile = bootFunctionsDir && path.join(bootFunctionsDir, `${role}.txt`);
  if (listFile && fs.existsSync(listFile)) {
    const recorded = parseBootFunctions(fs.readFileSync(listFile, 'utf8'), listFile);
    const n = compileBootFunctions(wrapRoleSource(text), roleAsset(role), recorded);
    process.stdout.write(`code-cache: ${role}: ${n.compiled} boot functions compiled${n.missing ? `; ${n.missing} of the ${recorded.length} recorded were not found in this bundle (changed since the list was recorded? \`make boot-functions\`)` : ''}\n`);
  }
  // The flag hash as the binary has it (bytecode flushing on) while the cache is made.
  v8.setFlagsFromString('--flush-bytecode');
  const cache = script.createCachedData();
  v8.setFlagsFromString('--no-flush-bytecode');
  fs.writeFileSync(path.join(dir, roleCacheAsset(role)), cache);
  fs.writeFileSync(path.join(dir, roleBuiltinsAsset(role)), builtins.map((b) => `${b}\n`).join(''));
}

/**
 * Compiles the recorded functions of the script `url` (source text `source`) without running
 * them: the inspector's Debugger.getPossibleBreakpoints compiles the function that holds the
 * position it is asked about (V8 has no other way to compile a function one cannot call). The
 * functions V8 lists (the inspector's coverage) are found by key, the ones nested in them
 * through the function around them (locateBootFunctions), and compiled outer first. The same
 * list and the same bundle always compile the same functions in the same order (and with
 * bytecode flushing off, above): the cache stays reproducible.
 */
function compileBootFunctions(source: string, url: string, recorded: readonly BootFunction[]): { compiled: number; missing: number } {
  const session = new inspector.Session();
  session.connect();
  // The inspector answers synchronously on this thread (the session is in-process).
  const post = <T>(method: string, params?: object): T => {
    let out: { err: Error | null; res?: unknown } | undefined;
    session.post(method, params ?? {}, (err, res) => (out = { err, res }));
    if (!out) throw new Error(`inspector: ${method} did not answer synchronously`);
    if (out.err) throw out.err;
    return out.res as T;
  };
  let scriptId: string | undefined;
  session.on('Debugger.scriptParsed', (m) => {
    if (m.params.url === url) scriptId = m.params.scriptId;
  });
  post('Debugger.enable');
  post('Profiler.enable');
  if (!scriptId) throw new Error(`code-cache: the inspector shows no script ${url}`);
  const lineStarts = [0];
  for (let i = source.indexOf('\n'); i >= 0; i = source.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const location = (offset: number) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { scriptId: scriptId!, lineNumber: lo, columnNumber: offset - lineStarts[lo]! };
  };
  const cov = post<{ result: { url: string; functions: CoveredFunction[] }[] }>('Profiler.getBestEffortCoverage');
  const listed = new Map<string, number[]>();
  for (const f of cov.result.find((r) => r.url === url)?.functions ?? []) {
    const r = f.ranges[0];
    if (!r) continue;
    const k = functionKey(source, r.startOffset, r.endOffset);
    listed.set(k, [...(listed.get(k) ?? []), r.startOffset]);
  }
  const { starts, missing } = locateBootFunctions(source, recorded, listed);
  for (const s of starts) post('Debugger.getPossibleBreakpoints', { start: location(s), end: location(s + 1), restrictToFunction: true });
  post('Profiler.disable');
  post('Debugger.disable');
  session.disconnect();
  return { compiled: starts.length, missing };
}
