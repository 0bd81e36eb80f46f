// How a role bundle's source becomes a function: the CommonJS wrapper, byte for byte the same
// when the code cache is made at build time (image-builder/code-cache.ts) and when the binary
// compiles the bundle at start (src/main.ts), because V8 accepts a cache only for the same source.
export const ROLE_WRAPPER_HEAD = '(function (exports, require, module, __filename, __dirname) {';
export const ROLE_WRAPPER_TAIL = '\n})';

export function wrapRoleSource(source: string): string {
  return ROLE_WRAPPER_HEAD + source + ROLE_WRAPPER_TAIL;
}

export type RoleFunction = (exports: object, require: NodeJS.Require, module: { exports: object }, filename: string, dirname: string) => void;

/** The asset names of a role inside the single executable. */
export const roleAsset = (role: string) => `${role}.cjs`;
export const roleCacheAsset = (role: string) => `${role}.cache`;

/**
 * The V8 flag the code caches are made and used with. V8 accepts a cache only when the flag
 * hash matches, and a cache made with a random string-hash seed differs from build to build;
 * so the build fixes the seed on its command line (reproducible caches), and the binary sets
 * the same flag before compiling (matching hash). Setting it in a running isolate does not
 * change that isolate's own seed, which stays random: only the flag hash follows.
 */
export const CODE_CACHE_V8_FLAG = '--hash-seed=1337';
