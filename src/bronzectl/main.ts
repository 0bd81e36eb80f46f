#!/usr/bin/env node
// The full bronzectl: the bundle that runs any command (cli.ts). `node bronzectl.cjs ...` runs
// it at once; the front (front.ts), which starts first in the single executable and in
// bin/bronzectl.mjs, loads it and calls start() for the commands it does not run itself.
// Ctrl-C ends streams (logs -f, dmesg -f, get -w, events) cleanly; a second Ctrl-C exits at once.
import { run } from './cli.ts';
import { exitWhenWritten } from './exit.ts';

/** Runs the CLI on process.argv and exits with its code. */
export function start(): void {
  // Warnings that are noise for a CLI user: Node 20 flags WebCrypto Ed25519 as experimental, and
  // grpc-js sets the TLS server name to the endpoint even when it is an IP address (DEP0123; the
  // certificate is still checked against the address's IP SAN).
  const emitWarning = process.emitWarning.bind(process);
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (/Ed25519|Web Crypto API|ServerName to an IP address/i.test(text)) return;
    (emitWarning as (...a: unknown[]) => void)(warning, ...rest);
  }) as typeof process.emitWarning;

  const interrupt = new AbortController();
  process.on('SIGINT', () => {
    if (interrupt.signal.aborted) process.exit(130);
    interrupt.abort();
  });

  // No top-level await: the bundle is CommonJS.
  void run(process.argv.slice(2), { signal: interrupt.signal }).then(exitWhenWritten);
}

// Run when this bundle is the program itself; the front and the build of its code cache
// (image-builder/code-cache.ts) load it as a module and call start() themselves.
if (require.main === module) start();
