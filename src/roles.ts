// The roles of the one binary, as data. Its role comes from argv[0] (`init` and `machined` are
// PID 1's names; the daemons are links to the same file), or, in a plain Node run, from the
// first argument. Each role is bundled on its own (image-builder/bundle.ts), from the module
// named here, so a process parses and runs only the code of its own role.
import path from 'node:path';

/** Each role's module (relative to src/); it exports `main()`. */
export const ROLE_MODULES = {
  machined: 'machined/main.ts',
  apid: 'apid/main.ts',
  trustd: 'trustd/main.ts',
  networkd: 'networkd/main.ts',
  timed: 'timed/main.ts',
  udevd: 'udevd/main.ts',
} as const;

export type Role = keyof typeof ROLE_MODULES;

/** The roles that make syscalls through koffi: only they load its native module at start. */
export const NATIVE_ROLES: ReadonlySet<Role> = new Set<Role>(['machined', 'networkd', 'timed', 'udevd']);

export type OptimizingMoment = 'loaded' | 'running';

/**
 * From when a role's V8 may optimize with Maglev and TurboFan (all roles load and boot without them:
 * CODE_CACHE_V8_FLAGS in lib/role-source.ts). apid is the API's hot path from its first call,
 * and machined answers what apid forwards, once the node is up; the other daemons watch and
 * idle, and their work (netlink, uevents, SNTP, a certificate now and then) is never hot enough
 * to pay for optimized code, nor for the memory it takes.
 */
export const OPTIMIZING_FROM: Readonly<Record<Role, OptimizingMoment | 'never'>> = {
  machined: 'running',
  apid: 'loaded',
  trustd: 'never',
  networkd: 'never',
  timed: 'never',
  udevd: 'never',
};

/** Other names a role answers to: the kernel starts PID 1 as `init`. */
export const ROLE_ALIASES: Readonly<Record<string, Role>> = { init: 'machined' };

export function roleOf(name: string): Role | undefined {
  if (Object.hasOwn(ROLE_MODULES, name)) return name as Role;
  return Object.hasOwn(ROLE_ALIASES, name) ? ROLE_ALIASES[name] : undefined;
}

/** Every name the binary answers to. */
export function roleNames(): string[] {
  return [...Object.keys(ROLE_ALIASES), ...Object.keys(ROLE_MODULES)];
}

export function pickRole(argv0: string, argv: string[]): { role: string; rest: string[] } | undefined {
  const byName = path.basename(argv0);
  if (roleOf(byName)) return { role: byName, rest: argv.slice(1) };
  const i = argv.findIndex((a, idx) => idx >= 1 && roleOf(a) !== undefined);
  if (i >= 1) return { role: argv[i]!, rest: argv.slice(i + 1) };
  return undefined;
}
