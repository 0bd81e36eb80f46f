// The roles of the one binary. Its role comes from argv[0] (`init` and `machined` are PID 1's names; the
// daemons are links to the same file), or, in a plain Node run, from the first argument.
import path from 'node:path';
import { main as machined } from './machined/main.ts';
import { main as apid } from './apid/main.ts';
import { main as trustd } from './trustd/main.ts';
import { main as networkd } from './networkd/main.ts';
import { main as timed } from './timed/main.ts';
import { main as udevd } from './udevd/main.ts';

export const ROLES: Record<string, () => Promise<void>> = {
  init: machined,
  machined,
  apid,
  trustd,
  networkd,
  timed,
  udevd,
};

export function pickRole(argv0: string, argv: string[]): { role: string; rest: string[] } | undefined {
  const byName = path.basename(argv0);
  if (ROLES[byName]) return { role: byName, rest: argv.slice(1) };
  const i = argv.findIndex((a, idx) => idx >= 1 && ROLES[a] !== undefined);
  if (i >= 1) return { role: argv[i]!, rest: argv.slice(i + 1) };
  return undefined;
}

