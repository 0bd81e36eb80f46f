// `bronzectl meta write <key> <value>` and `bronzectl meta delete <key>`: a key of the nodes'
// META partition (MachineService MetaWrite/MetaDelete), as talosctl: the key is Talos's number
// (decimal, 0x hex, 0o or leading-0 octal, 0b binary; 0-255). Each node maps it to Bronze's own
// key or refuses it, saying why (src/machined/api/meta.ts: 12, 13 and 14, the keys Talos keeps
// for the user's data, are the ones Bronze takes). Prints nothing on success.
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { UserError } from '../session.ts';

/** A key as Go's strconv.ParseUint(s, 0, 8) reads it (talosctl's parsing). */
export function parseMetaKey(s: string): number {
  let base = 10;
  let digits = s;
  const prefix = /^0([xXbBoO])/.exec(s);
  if (prefix) {
    base = ({ x: 16, b: 2, o: 8 } as Record<string, number>)[prefix[1]!.toLowerCase()]!;
    digits = s.slice(2);
  } else if (s.length > 1 && s.startsWith('0')) {
    base = 8;
    digits = s.slice(1);
  }
  // Go allows underscores between digits once a base prefix is given.
  if (base !== 10 && !/__|_$/.test(digits)) digits = digits.replace(/_/g, '');
  const valid = ({ 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ } as Record<number, RegExp>)[base]!;
  if (!valid.test(digits)) throw new UserError(`strconv.ParseUint: parsing ${JSON.stringify(s)}: invalid syntax`);
  const n = parseInt(digits, base);
  if (n > 255) throw new UserError(`strconv.ParseUint: parsing ${JSON.stringify(s)}: value out of range`);
  return n;
}

export function register(program: Command, ctx: Ctx): void {
  const meta = program.command('meta').description('Write and delete keys in the META partition');
  const INSECURE = ['-i, --insecure', 'write|delete meta using the insecure (encrypted with no auth) maintenance service'] as const;
  const session = (opts: { insecure?: boolean }) => {
    const s = ctx.session();
    s.insecure = !!opts.insecure;
    return s;
  };

  meta
    .command('write')
    .description('Write a key-value pair to the META partition.')
    .argument('<key>', "a Talos META key (0-255; Bronze takes 12, 13 and 14, Talos's user keys)")
    .argument('<value>')
    .option(...INSECURE)
    .action(async (key: string, value: string, opts: { insecure?: boolean }) => {
      const k = parseMetaKey(key);
      await session(opts).fanOut((c, o) => c.machine.MetaWrite({ key: k, value: Buffer.from(value, 'utf8') }, o));
    });

  meta
    .command('delete')
    .description('Delete a key from the META partition.')
    .argument('<key>', 'a Talos META key (0-255)')
    .option(...INSECURE)
    .action(async (key: string, opts: { insecure?: boolean }) => {
      const k = parseMetaKey(key);
      await session(opts).fanOut((c, o) => c.machine.MetaDelete({ key: k }, o));
    });
}
