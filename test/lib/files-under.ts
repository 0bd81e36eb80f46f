import fs from 'node:fs';
import path from 'node:path';

/** Every regular file under `root`, as paths relative to it, sorted (what `cp` of a directory should give). */
export function filesUnder(root: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...filesUnder(root, r));
    else if (e.isFile()) out.push(r);
  }
  return out.sort();
}
