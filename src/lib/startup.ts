// Where a process's start-up went, for the console: Node's own bootstrap (from its timing
// marks), loading this role's bundle (marks set by src/main.ts), and the time since the
// process began. Boot benchmarks and the console read it; nothing depends on its format.
import { performance } from 'node:perf_hooks';

export const ROLE_LOAD_START = 'bronze:role-load-start';
export const ROLE_LOADED = 'bronze:role-loaded';
/** Around machined's early start of the first services (src/machined/early.ts). */
export const FIRST_SERVICES_START = 'bronze:first-services-start';
export const FIRST_SERVICES_STARTED = 'bronze:first-services-started';
/** Around loading koffi's native module (src/role-entry.ts). */
export const NATIVE_START = 'bronze:native-start';
export const NATIVE_LOADED = 'bronze:native-loaded';

function mark(name: string): number | undefined {
  const entries = performance.getEntriesByName(name, 'mark');
  return entries.length > 0 ? entries[entries.length - 1]!.startTime : undefined;
}

/** e.g. "node 1830 ms, role bundle 412 ms, native 40 ms, 2301 ms since exec, cpu 2150 ms (sys 700 ms, 9000 page faults)". */
export function startupTimes(): string {
  const ms = (n: number) => `${Math.round(n)} ms`;
  const parts = [`node ${ms(performance.nodeTiming.bootstrapComplete)}`];
  const span = (label: string, from: string, to: string) => {
    const a = mark(from);
    const b = mark(to);
    if (a !== undefined && b !== undefined) parts.push(`${label} ${ms(b - a)}`);
  };
  span('first services', FIRST_SERVICES_START, FIRST_SERVICES_STARTED);
  span('role bundle', ROLE_LOAD_START, ROLE_LOADED);
  span('native', NATIVE_START, NATIVE_LOADED);
  parts.push(`${ms(performance.now())} since exec`);
  // CPU since the process began (PID 1's includes preinit's), and its page faults: a start
  // under QEMU/TCG is bound by CPU, much of it the kernel's (faulting the binary in).
  const use = process.resourceUsage();
  parts.push(`cpu ${ms((use.userCPUTime + use.systemCPUTime) / 1000)} (sys ${ms(use.systemCPUTime / 1000)}, ${use.minorPageFault + use.majorPageFault} page faults)`);
  return parts.join(', ');
}
