// What starts first, in the single executable (image-builder/bronzectl.sh) and in
// bin/bronzectl.mjs: the command tree and nothing else (program.ts). It runs help, usage errors,
// `version --client` and `completion` itself, which is all a quick start needs; any other
// command goes, before its action starts and with nothing written, to the full CLI (main.ts),
// which runs the same command line from the start. The full CLI is the SEA asset
// `bronzectl.cjs`, compiled with its V8 code cache `bronzectl.cache` made at build time (as the
// node's binary loads its roles: src/lib/role-source.ts), or else the file bronzectl.cjs beside
// this bundle.
import path from 'node:path';
import { CODE_CACHE_V8_FLAG, roleAsset, roleCacheAsset, wrapRoleSource, type RoleFunction } from '../lib/role-source.ts';
import { exitWhenWritten } from './exit.ts';
import { HAND_OFF, runProgram } from './program.ts';

/** The full CLI's asset (and code cache asset) in the single executable; its file elsewhere. */
const FULL = 'bronzectl';

interface FullCli {
  start(): void;
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

function loadFromSea(api: SeaApi): FullCli {
  const vm = process.getBuiltinModule('node:vm');
  const v8 = process.getBuiltinModule('node:v8');
  const source = wrapRoleSource(api.getAsset(roleAsset(FULL), 'utf8'));
  let cachedData: Buffer | undefined;
  try {
    cachedData = Buffer.from(api.getRawAsset(roleCacheAsset(FULL)));
  } catch {
    cachedData = undefined; // a build without the cache: V8 compiles from source
  }
  v8.setFlagsFromString(CODE_CACHE_V8_FLAG);
  const filename = roleAsset(FULL);
  const script = new vm.Script(source, { filename, ...(cachedData ? { cachedData } : {}) });
  const fn = script.runInThisContext() as RoleFunction;
  const mod = { exports: {} as FullCli };
  fn(mod.exports, require, mod, path.join(path.dirname(process.execPath), filename), path.dirname(process.execPath));
  return mod.exports;
}

function loadFromFile(): FullCli {
  return require(path.join(__dirname, roleAsset(FULL))) as FullCli;
}

// No top-level await: the bundle is CommonJS.
void runProgram(process.argv.slice(2), {}, { front: true }).then((code) => {
  if (code !== HAND_OFF) return exitWhenWritten(code);
  const api = sea();
  (api ? loadFromSea(api) : loadFromFile()).start();
});
