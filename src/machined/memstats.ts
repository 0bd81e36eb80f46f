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
