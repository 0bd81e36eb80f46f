// The one binary's entry point, and all the single executable's main script holds: it picks
// the role and loads only that role's bundle. Inside the single executable the bundle is the
// SEA asset `<role>.cjs`, compiled with the V8 code cache made for it at build time
// (`<role>.cache`, see image-builder/code-cache.ts); in a plain Node run it is the file
// `<role>.cjs` beside this one (image-builder/bundle.ts --roles writes both).
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { pickRole, roleNames, roleOf, type Role } from './roles.ts';
import { CODE_CACHE_V8_FLAG, roleAsset, roleCacheAsset, wrapRoleSource, type RoleFunction } from './lib/role-source.ts';

interface RoleModule {
  start(): Promise<void>;
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

function loadFromSea(api: SeaApi, role: Role): RoleModule {
  const source = wrapRoleSource(api.getAsset(roleAsset(role), 'utf8'));
  let cachedData: Buffer | undefined;
  try {
    cachedData = Buffer.from(api.getRawAsset(roleCacheAsset(role)));
  } catch {
    cachedData = undefined; // a build without caches: V8 compiles from source
  }
  v8.setFlagsFromString(CODE_CACHE_V8_FLAG);
  // The name the cache was made with (image-builder/code-cache.ts); stack traces show it.
  const filename = roleAsset(role);
  const script = new vm.Script(source, { filename, cachedData });
  // A rejected cache (another V8, other flags) only costs time: say so, so a benchmark shows why.
  if (cachedData && script.cachedDataRejected) process.stderr.write(`bronze: ${role}: the code cache was rejected; compiling from source\n`);
  const fn = script.runInThisContext() as RoleFunction;
  const mod = { exports: {} as RoleModule };
  fn(mod.exports, require, mod, path.join(path.dirname(process.execPath), filename), path.dirname(process.execPath));
  return mod.exports;
}

function loadFromFile(role: Role): RoleModule {
  return require(path.join(__dirname, roleAsset(role))) as RoleModule;
}

async function run(): Promise<void> {
  const picked = pickRole(process.argv0, process.argv);
  const role = picked && roleOf(picked.role);
  if (!role) {
    process.stderr.write(`bronze: unknown role '${path.basename(process.argv0)}'; run as one of: ${roleNames().join(', ')}\n`);
    process.exit(2);
  }
  const api = sea();
  const mod = api ? loadFromSea(api, role) : loadFromFile(role);
  await mod.start();
}

run().catch((err: unknown) => {
  process.stderr.write(`bronze: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
