// Proportional set size (PSS) of a process: its private pages plus its share of the pages
// it shares (the binary's text is shared by every Bronze process, so RSS would count it
// six times). Read from /proc/<pid>/smaps_rollup.
import fs from 'node:fs';

export function parsePssKiB(smapsRollup: string): number | undefined {
  const m = /^Pss:\s+(\d+) kB$/m.exec(smapsRollup);
  return m ? Number(m[1]) : undefined;
}

export function pssKiB(pid: number): number | undefined {
  try {
    return parsePssKiB(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** "machined=41.2MiB apid=30.1MiB ... total=71.3MiB" for the given processes. */
export function memoryReport(procs: Array<{ name: string; pid: number | undefined }>, pss: (pid: number) => number | undefined = pssKiB): string {
  let total = 0;
  const parts = procs.map(({ name, pid }) => {
    const kib = pid === undefined ? undefined : pss(pid);
    total += kib ?? 0;
    return `${name}=${kib === undefined ? '?' : `${(kib / 1024).toFixed(1)}MiB`}`;
  });
  return [...parts, `total=${(total / 1024).toFixed(1)}MiB`].join(' ');
}

/**
 * Where a process's PSS is, from /proc/<pid>/smaps: KiB per mapping name (a file's path, or
 * the kernel's name: [heap], [stack], [anon] for a nameless mapping), the largest first.
 */
export function parsePssByMapping(smaps: string): Array<{ name: string; kib: number }> {
  const byName = new Map<string, number>();
  let name = '[anon]';
  for (const line of smaps.split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      name = head[1] || '[anon]';
      continue;
    }
    const pss = /^Pss:\s+(\d+) kB$/.exec(line);
    if (pss) byName.set(name, (byName.get(name) ?? 0) + Number(pss[1]));
  }
  return [...byName].map(([n, kib]) => ({ name: n, kib })).sort((a, b) => b.kib - a.kib);
}

/** "anon 12.3 [heap] 4.1 /sbin/init 3.2 ..." (MiB): the `top` largest mappings of a process. */
export function mappingReport(pid: number, top = 6): string {
  let smaps: string;
  try {
    smaps = fs.readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return '?';
  }
  return parsePssByMapping(smaps)
    .slice(0, top)
    .map((m) => `${m.name}=${(m.kib / 1024).toFixed(1)}`)
    .join(' ');
}

/**
 * CPU time a process has used, user and system, in seconds, from /proc/<pid>/stat: fields 14
 * and 15 after the command (which may hold spaces and parentheses, so parsing starts after its
 * last ')'), in clock ticks of 1/100 s (USER_HZ on Linux).
 */
export function parseCpuSeconds(stat: string): { user: number; system: number } | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const user = Number(fields[11]);
  const system = Number(fields[12]);
  return Number.isFinite(user) && Number.isFinite(system) ? { user: user / 100, system: system / 100 } : undefined;
}

export function cpuSeconds(pid: number): { user: number; system: number } | undefined {
  try {
    return parseCpuSeconds(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** "machined=3.21s(sys 1.02) apid=1.10s(sys 0.31) ... total=9.80s(sys 2.50)": CPU time so far. */
export function cpuReport(procs: Array<{ name: string; pid: number | undefined }>, cpu: (pid: number) => { user: number; system: number } | undefined = cpuSeconds): string {
  let user = 0;
  let system = 0;
  const show = (u: number, s: number) => `${(u + s).toFixed(2)}s(sys ${s.toFixed(2)})`;
  const parts = procs.map(({ name, pid }) => {
    const t = pid === undefined ? undefined : cpu(pid);
    user += t?.user ?? 0;
    system += t?.system ?? 0;
    return `${name}=${t === undefined ? '?' : show(t.user, t.system)}`;
  });
  return [...parts, `total=${show(user, system)}`].join(' ');
}
