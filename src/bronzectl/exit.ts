// How bronzectl's entries (main.ts, front.ts) end.

/** Exits with `code` once stdout has drained (a pipe to `head` may close early: EPIPE just ends it). */
export function exitWhenWritten(code: number): void {
  process.stdout.on('error', () => process.exit(code));
  process.stdout.write('', () => process.exit(code));
}
