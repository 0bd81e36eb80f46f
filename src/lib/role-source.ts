// How the single executable loads the bundle it runs: its main script is small, and the bundle
// (a role of the node's binary, or bronzectl's full CLI) travels as the SEA asset `<name>.cjs`
// with its V8 code cache `<name>.cache` and the list of built-in modules it loads
// `<name>.builtins`, made at build time by image-builder/code-cache.ts.
// Outside the single executable the bundle is the file `<name>.cjs` beside the main script.
// The CommonJS wrapper is byte for byte the same at build time and at start, because V8
// accepts a cache only for the same source.
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { OPTIMIZING_FROM, type OptimizingMoment, type Role } from '../roles.ts';

export const ROLE_WRAPPER_HEAD = '(function (exports, require, module, __filename, __dirname) {';
export const ROLE_WRAPPER_TAIL = '\n})';

export function wrapRoleSource(source: string): string {
  return ROLE_WRAPPER_HEAD + source + ROLE_WRAPPER_TAIL;
}

export type RoleFunction = (exports: object, require: NodeJS.Require, module: { exports: object }, filename: string, dirname: string) => void;

/** The asset names of a bundle inside the single executable. */
export const roleAsset = (name: string) => `${name}.cjs`;
export const roleCacheAsset = (name: string) => `${name}.cache`;
export const roleBuiltinsAsset = (name: string) => `${name}.builtins`;

/**
 * The V8 flags the code caches are made and used with. V8 accepts a cache only when the flag
 * hash matches, and a cache made with a random string-hash seed differs from build to build;
 * so the build fixes the seed on its command line (reproducible caches), and the binary sets
 * the same flags before compiling (matching hash). Setting the seed in a running isolate does
 * not change that isolate's own seed, which stays random: only the flag hash follows.
 *
 * No Sparkplug and no Maglev: under QEMU/TCG every page of machine code V8 writes is translated
 * again by the emulator, and the baseline and mid-tier compilers write a great deal of it while
 * a process starts, for code that mostly runs a few times. Ignition's bytecode (what the caches
 * hold) runs on builtins translated once. No TurboFan either while a role loads and boots: its
 * optimized code is machine code too, written for functions that are hot only for those seconds;
 * a role that serves a hot path turns it on once it is up (optimizeFrom). Measured with
 * bench/boot.ts-style interleaved boots (QEMU/TCG, 2 vCPUs): see the commits.
 */
export const CODE_CACHE_SEED_FLAG = '--hash-seed=1337';
export const CODE_CACHE_V8_FLAGS: readonly string[] = [CODE_CACHE_SEED_FLAG, '--no-sparkplug', '--no-maglev', '--no-turbofan'];

/**
 * Turns the optimizing compilers (Maglev and TurboFan) on in this isolate when `moment` is the
 * one OPTIMIZING_FROM names for `role`.
 * The code cache was checked against the flags when the bundle compiled; a flag set later only
 * changes what V8 does from then on. Outside the single executable they were never off.
 */
export function optimizeFrom(role: Role, moment: OptimizingMoment): void {
  if (OPTIMIZING_FROM[role] === moment) optimizeFromNow();
}

/**
 * Turns Maglev and TurboFan on in this isolate from now on (also bronzectl's full CLI, once
 * compiled: it runs on an operator's machine). Maglev as well as TurboFan: a function hot enough
 * for TurboFan spends its warm-up in the interpreter without it. bench/api.ts, three runs each
 * against TurboFan alone: apid's p50 0.79-0.89 against 1.05-1.07 ms, p99 3.6-3.95 against
 * 4.35-4.58 ms, throughput alike. Sparkplug stays off: it compiles everything that runs a few
 * times, machine code that QEMU/TCG translates again.
 */
export function optimizeFromNow(): void {
  v8.setFlagsFromString('--turbofan --maglev');
}

interface SeaApi {
  isSea(): boolean;
  getAsset(key: string, encoding: string): string;
  getRawAsset(key: string): ArrayBuffer;
}

function sea(): SeaApi | undefined {
  try {
    const api = process.getBuiltinModule?.('node:sea') as SeaApi | undefined;
    return api?.isSea() ? api : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Loads the Node built-in modules the bundle's module code loads (the asset `<name>.builtins`,
 * recorded by image-builder/code-cache.ts), while V8's flags are still Node's own. Node compiles
 * its built-in modules from a code cache made with its default flags, which V8 refuses once the
 * flags (and so their hash) change: loaded after CODE_CACHE_V8_FLAGS, http2, tls, crypto and the
 * rest were compiled from source. Measured under QEMU/TCG in a 512 MiB VM (a bundle's module code
 * alone, no role started): a daemon's load took 350-400 ms instead of 690-800 ms, six roles
 * loading together 3.7-4.0 s instead of 5.0-5.2 s.
 */
function loadBuiltins(api: SeaApi, name: string, require: NodeJS.Require): void {
  let list: string;
  try {
    list = api.getAsset(roleBuiltinsAsset(name), 'utf8');
  } catch {
    return; // a build without the list: they load as the bundle asks for them
  }
  for (const id of list.split('\n')) if (id) require(id);
}

/**
 * Throws unless a bundle is ASCII, naming where it is not. The single executable reads its
 * bundles as Latin-1 (loadFromSea), which for ASCII is the same text: V8 makes a one-byte
 * string with a copy, where decoding UTF-8 (getAsset's 'utf8') took machined 150 ms under
 * QEMU/TCG for its 2.2 MB bundle. esbuild escapes what is not ASCII in strings and
 * identifiers, not in regular expression literals.
 */
export function assertAsciiBundle(text: string, name: string): void {
  const at = text.search(/[^\x00-\x7f]/);
  if (at < 0) return;
  const line = text.slice(0, at).split('\n').length;
  const context = JSON.stringify(text.slice(Math.max(0, at - 40), at + 20));
  throw new Error(`${name}: character ${at} (line ${line}) is not ASCII, U+${text.codePointAt(at)!.toString(16).toUpperCase().padStart(4, '0')} in ${context}: the single executable reads its bundles as Latin-1; write it as an escape (\\u...) in the source`);
}

/** Told the script's name and its exact source once a bundle from the single executable has loaded. */
export type OnBundleLoaded = (url: string, source: string) => void;

function loadFromSea<T>(api: SeaApi, name: string, require: NodeJS.Require, onLoaded?: OnBundleLoaded): T {
  // Latin-1, not UTF-8: the bundles are ASCII (assertAsciiBundle, checked when the caches are made).
  const source = wrapRoleSource(Buffer.from(api.getRawAsset(roleAsset(name))).toString('latin1'));
  let cachedData: Buffer | undefined;
  try {
    cachedData = Buffer.from(api.getRawAsset(roleCacheAsset(name)));
  } catch {
    cachedData = undefined; // a build without caches: V8 compiles from source
  }
  loadBuiltins(api, name, require);
  v8.setFlagsFromString(CODE_CACHE_V8_FLAGS.join(' '));
  // The name the cache was made with (image-builder/code-cache.ts); stack traces show it.
  const filename = roleAsset(name);
  const script = new vm.Script(source, { filename, ...(cachedData ? { cachedData } : {}) });
  // A rejected cache (another V8, other flags) only costs time: say so, so a benchmark shows why.
  if (cachedData && script.cachedDataRejected) process.stderr.write(`bronze: ${name}: the code cache was rejected; compiling from source\n`);
  const fn = script.runInThisContext() as RoleFunction;
  const mod = { exports: {} as T };
  const dir = path.dirname(process.execPath);
  fn(mod.exports as object, require, mod as { exports: object }, path.join(dir, filename), dir);
  onLoaded?.(filename, source);
  return mod.exports;
}

/**
 * Loads the bundle `name`: from the single executable's assets, or from `<dir>/<name>.cjs`.
 * `require` is the caller's own (in the single executable it loads Node's built-in modules).
 */
export function loadBundle<T>(name: string, dir: string, require: NodeJS.Require, onLoaded?: OnBundleLoaded): T {
  const api = sea();
  return api ? loadFromSea<T>(api, name, require, onLoaded) : (require(path.join(dir, roleAsset(name))) as T);
}
