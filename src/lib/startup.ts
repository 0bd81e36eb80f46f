// Where a process's start-up went, for the console: Node's own bootstrap (from its timing
// marks), loading this role's bundle (marks set by src/main.ts), and the time since the
// process began. Boot benchmarks and the console read it; nothing depends on its format.
import { performance } from 'node:perf_hooks';

export const ROLE_LOAD_START = 'bronze:role-load-start';
export const ROLE_LOADED = 'bronze:role-loaded';

function mark(name: string): number | undefined {
  const entries = performance.getEntriesByName(name, 'mark');
  return entries.length > 0 ? entries[entries.length - 1]!.startTime : undefined;
}

/** e.g. "node 1830 ms, role bundle 412 ms, 2301 ms since exec". */
export function startupTimes(): string {
  const ms = (n: number) => `${Math.round(n)} ms`;
  const parts = [`node ${ms(performance.nodeTiming.bootstrapComplete)}`];
  const start = mark(ROLE_LOAD_START);
  const loaded = mark(ROLE_LOADED);
  if (start !== undefined && loaded !== undefined) parts.push(`role bundle ${ms(loaded - start)}`);
  parts.push(`${ms(performance.now())} since exec`);
  return parts.join(', ');
}
