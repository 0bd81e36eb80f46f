// Flag value parsers shared by the commands.
import { InvalidArgumentError } from 'commander';

/** Repeatable, comma-separated list flag (`-n a -n b,c` → [a, b, c]). */
export function listArg(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];
}

/** An integer flag value; `min` bounds it. */
export function intArg(min = -Infinity) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`${JSON.stringify(value)} is not an integer.`);
    const n = Number(value);
    if (n < min) throw new InvalidArgumentError(`${n} is below the minimum ${min}.`);
    return n;
  };
}
