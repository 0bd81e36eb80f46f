// A CPU profile of a role's first seconds, for finding what a boot spends its time on where no
// profiler can be attached (the node has no shell): the kernel argument
// `bronze.profile=<role>[,<role>...]` (and `bronze.profile.seconds=<n>`, default 60) makes that
// role record a V8 CPU profile (node:inspector, in-process) from its start, then write the
// functions with the most self time to stderr, which machined relays to the console.
// `bronze.profile.window=<from>-<to>` counts only the samples taken between those two times
// since the kernel started, in seconds (V8 stamps its samples with CLOCK_MONOTONIC, the clock
// of the console's timestamps): the profile of one moment of the boot, such as the first API
// read, instead of the whole start.
// Off unless asked for: profiling slows the process it samples.
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** Seconds since the kernel started (CLOCK_MONOTONIC), from and to. */
export interface ProfileWindow {
  from: number;
  to: number;
}

/** The roles `bronze.profile=` names on this kernel command line, for how long, and the window counted. */
export function profileRequest(cmdline: string): { roles: string[]; seconds: number; window?: ProfileWindow } {
  const arg = (name: string) => cmdline.split(/\s+/).find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
  const roles = (arg('bronze.profile') ?? '').split(',').filter(Boolean);
  const seconds = Number(arg('bronze.profile.seconds') ?? 60);
  const w = /^(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$/.exec(arg('bronze.profile.window') ?? '');
  const window = w && Number(w[1]) < Number(w[2]) ? { from: Number(w[1]), to: Number(w[2]) } : undefined;
  return { roles, seconds: Number.isFinite(seconds) && seconds > 0 ? seconds : 60, ...(window ? { window } : {}) };
}

/** Self time per function (name, file, line), most first: the lines the console gets. Only the
 *  samples taken in `window` count, if one is given. */
export function topSelfTime(profile: Profile, limit = 25, window?: ProfileWindow): string[] {
  const selfMs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // A sample's time is the delta to the next one (V8's own convention in DevTools); its stamp,
  // in microseconds, is the profile's start plus the deltas up to it.
  const inWindow = window ? (us: number) => us >= window.from * 1e6 && us < window.to * 1e6 : () => true;
  let stamp = profile.startTime;
  let counted = 0;
  for (let i = 0; i < samples.length; i++) {
    stamp += deltas[i] ?? 0;
    if (!inWindow(stamp)) continue;
    const ms = (deltas[i + 1] ?? 0) / 1000;
    counted += ms;
    selfMs.set(samples[i]!, (selfMs.get(samples[i]!) ?? 0) + ms);
  }
  const nameOf = (n: ProfileNode) => {
    const f = n.callFrame;
    return `${f.functionName || '(anonymous)'} ${f.url ? `${f.url.split('/').pop()}:${f.lineNumber + 1}:${f.columnNumber + 1}` : ''}`.trim();
  };
  const parent = new Map<number, ProfileNode>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n);
  const byFunction = new Map<string, number>();
  // Per function, the node (call path) with the most of its self time, so that a hot built-in
  // says who called it, and who called that.
  const heaviest = new Map<string, { node: ProfileNode; ms: number }>();
  for (const n of profile.nodes) {
    const ms = selfMs.get(n.id) ?? 0;
    if (ms === 0) continue;
    const key = nameOf(n);
    byFunction.set(key, (byFunction.get(key) ?? 0) + ms);
    if ((heaviest.get(key)?.ms ?? 0) < ms) heaviest.set(key, { node: n, ms });
  }
  const total = window ? counted : (profile.endTime - profile.startTime) / 1000;
  const rows = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, limit);
  const callPath = (k: string) => {
    const out: string[] = [];
    for (let p = parent.get(heaviest.get(k)!.node.id); p && out.length < 4; p = parent.get(p.id)) out.push(`  <- ${nameOf(p)}`);
    return out.join('');
  };
  const span = window ? ` from ${window.from} to ${window.to} s since the kernel started` : '';
  return [`profile: ${total.toFixed(0)} ms sampled${span}; self time per function (<- its heaviest callers):`, ...rows.map(([k, ms]) => `profile: ${ms.toFixed(0).padStart(7)} ms  ${k}${callPath(k)}`)];
}

/** Starts the profile if the command line asks for this role; returns at once. */
export async function maybeProfile(role: string): Promise<void> {
  let cmdline: string;
  try {
    cmdline = fs.readFileSync('/proc/cmdline', 'utf8');
  } catch {
    // machined as PID 1 mounts /proc itself, just after it starts, and apid and networkd start
    // before it (machined/early.ts): look again then.
    setTimeout(() => void maybeProfile(role), 500).unref();
    return;
  }
  const { roles, seconds, window } = profileRequest(cmdline);
  if (!roles.includes(role)) return;
  // Not import(): a role bundle runs in a vm.Script, which has no dynamic-import callback.
  const inspector = (process.getBuiltinModule?.('node:inspector') ?? (await import('node:inspector'))) as typeof import('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 1000 });
  await post('Profiler.start');
  process.stderr.write(`${role}: profiling for ${seconds} s (bronze.profile)\n`);
  const t = setTimeout(() => {
    void post('Profiler.stop')
      .then((res) => {
        for (const line of topSelfTime((res as { profile: Profile }).profile, 25, window)) process.stderr.write(`${line}\n`);
      })
      .catch((err: Error) => process.stderr.write(`profile: ${err.message}\n`))
      .finally(() => session.disconnect());
  }, seconds * 1000);
  t.unref();
}
