import fs from 'node:fs';
import path from 'node:path';

/** Appends console lines to _out/e2e/<name>.log, so a failed run can be read afterwards. */
export function consoleFile(name: string): (line: string) => void {
  const file = path.join('_out', 'e2e', `${name}.log`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '');
  return (line) => fs.appendFileSync(file, line + '\n');
}
