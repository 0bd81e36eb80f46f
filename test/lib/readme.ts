// The README's commands, as the end-to-end test runs them: every line of its ```sh blocks, in
// order, without the trailing comment. Nothing else is read from the README: what a command
// means for the test (start a node, wait for a reboot) is decided by the test, from the command.

export interface ReadmeCommand {
  /** 1-based number of the ```sh block, and of the line in the README. */
  block: number;
  line: number;
  /** The command as written, its trailing `# comment` removed. */
  text: string;
}

/** The command without a trailing shell comment (a `#` outside quotes, after a blank). */
export function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"') i++;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '\\') i++;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i).trimEnd();
  }
  return line.trimEnd();
}

export function readmeCommands(markdown: string): ReadmeCommand[] {
  const out: ReadmeCommand[] = [];
  const lines = markdown.split('\n');
  let block = 0;
  let inSh = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (!inSh && /^```(sh|bash|shell)\s*$/.test(l)) {
      inSh = true;
      block++;
      continue;
    }
    if (inSh && /^```\s*$/.test(l)) {
      inSh = false;
      continue;
    }
    if (!inSh) continue;
    const text = stripComment(l.trim());
    if (text) out.push({ block, line: i + 1, text });
  }
  if (inSh) throw new Error('README: a ```sh block is not closed');
  return out;
}

/** Replaces each `from` by its `to`, longest `from` first, in one pass (a replacement is never replaced again). */
export function substitute(text: string, pairs: ReadonlyArray<readonly [string, string]>): string {
  const sorted = [...pairs].sort((a, b) => b[0].length - a[0].length);
  let out = '';
  for (let i = 0; i < text.length; ) {
    const hit = sorted.find(([from]) => text.startsWith(from, i));
    if (hit) {
      out += hit[1];
      i += hit[0].length;
    } else out += text[i++];
  }
  return out;
}
