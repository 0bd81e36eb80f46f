// The kernel command line: `key=value` and bare flags, values may be double-quoted.
import fs from 'node:fs';

export type Cmdline = Map<string, string>;

export function parseCmdline(text: string): Cmdline {
  const out: Cmdline = new Map();
  const re = /([^\s=]+)(?:=("[^"]*"|\S*))?/g;
  for (const m of text.matchAll(re)) {
    const key = m[1]!;
    let value = m[2] ?? '';
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    out.set(key, value);
  }
  return out;
}

export function readCmdline(path = '/proc/cmdline'): Cmdline {
  try {
    return parseCmdline(fs.readFileSync(path, 'utf8'));
  } catch {
    return new Map();
  }
}
