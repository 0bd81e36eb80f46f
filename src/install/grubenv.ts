// GRUB's environment block (BOOT's grub/grubenv; image-builder/grub/disk.cfg lists the variables
// Bronze keeps there). Read and written here rather than through grub-editenv, which the image
// does not carry. The format, as GRUB's lib/envblk.c reads and writes it:
//
//   exactly 1024 bytes:
//   "# GRUB Environment Block\n"                      the signature
//   name=value\n ...                                 one line per variable
//   ###...                                           '#' up to the end
//
// A line that starts with '#' is a comment (Debian's grub-editenv adds a "# WARNING: Do not
// edit ..." line after the signature). In values, backslash and newline are escaped with a
// backslash ("\\", "\" + newline); names are not escaped, so they may not hold '=' or newline.
// GRUB rewrites the block in place (save_env), never resizing it.

export const GRUBENV_SIZE = 1024;
export const GRUBENV_SIGNATURE = '# GRUB Environment Block\n';

const NL = 0x0a;
const HASH = 0x23;
const BACKSLASH = 0x5c;
const EQUALS = 0x3d;

/** The variables of a block, in order. Throws on a wrong size or signature and on malformed lines. */
export function parseGrubenv(buf: Uint8Array): Map<string, string> {
  if (buf.length !== GRUBENV_SIZE) throw new Error(`grubenv: ${buf.length} bytes, an environment block has exactly ${GRUBENV_SIZE}`);
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.length);
  if (b.toString('latin1', 0, GRUBENV_SIGNATURE.length) !== GRUBENV_SIGNATURE) {
    throw new Error(`grubenv: does not start with the signature ${JSON.stringify(GRUBENV_SIGNATURE)}`);
  }
  const vars = new Map<string, string>();
  let p = GRUBENV_SIGNATURE.length;
  while (p < b.length) {
    if (b[p] === HASH) {
      const nl = b.indexOf(NL, p);
      p = nl < 0 ? b.length : nl + 1;
      continue;
    }
    const lineStart = p;
    const eq = b.indexOf(EQUALS, p);
    const nl = b.indexOf(NL, p);
    if (eq < 0 || (nl >= 0 && nl < eq)) {
      throw new Error(`grubenv: line at byte ${lineStart} has no '=': ${JSON.stringify(b.toString('utf8', lineStart, nl < 0 ? b.length : nl))}`);
    }
    const name = b.toString('utf8', lineStart, eq);
    const value: number[] = [];
    p = eq + 1;
    for (;;) {
      if (p >= b.length) throw new Error(`grubenv: the value of ${name} runs to the end of the block (no newline)`);
      const c = b[p]!;
      if (c === NL) break;
      if (c === BACKSLASH) {
        if (p + 1 >= b.length) throw new Error(`grubenv: the value of ${name} ends in a lone backslash`);
        value.push(b[p + 1]!);
        p += 2;
      } else {
        value.push(c);
        p++;
      }
    }
    p++; // the newline
    if (vars.has(name)) throw new Error(`grubenv: variable ${name} is set twice`);
    vars.set(name, Buffer.from(value).toString('utf8'));
  }
  return vars;
}

/** A 1024-byte block holding vars in their order; throws naming the variable that is invalid or does not fit. */
export function serializeGrubenv(vars: ReadonlyMap<string, string> | Readonly<Record<string, string>>): Buffer {
  const entries = vars instanceof Map ? [...vars] : Object.entries(vars);
  const out = Buffer.alloc(GRUBENV_SIZE, HASH);
  let p = out.write(GRUBENV_SIGNATURE, 0, 'latin1');
  for (const [name, value] of entries) {
    checkName(name);
    if (value.includes('\0')) throw new Error(`grubenv: the value of ${name} holds a NUL byte`);
    const line = Buffer.from(`${name}=${value.replace(/[\\\n]/g, (c: string) => `\\${c}`)}\n`, 'utf8');
    if (p + line.length > GRUBENV_SIZE) {
      throw new Error(
        `grubenv: variable ${name} does not fit: its line takes ${line.length} bytes, ${GRUBENV_SIZE - p} of the ${GRUBENV_SIZE}-byte block are left`,
      );
    }
    p += line.copy(out, p);
  }
  return out;
}

function checkName(name: string): void {
  const bad =
    name === '' ? 'is empty'
    : name.includes('=') ? "holds '='"
    : name.includes('\n') ? 'holds a newline'
    : name.includes('\0') ? 'holds a NUL byte'
    : name.startsWith('#') ? "starts with '#' (a comment to GRUB)"
    : undefined;
  if (bad) throw new Error(`grubenv: variable name ${JSON.stringify(name)} ${bad}`);
}
