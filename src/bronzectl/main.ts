#!/usr/bin/env node
// bronzectl's entry: runs the CLI on process.argv and exits with its code. Ctrl-C ends streams
// (logs -f, dmesg -f, get -w, events) cleanly; a second Ctrl-C exits at once.
import { run } from './cli.ts';

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
void run(process.argv.slice(2), { signal: interrupt.signal }).then((code) => {
  // Leave once stdout has drained (a pipe to `head` may close early: EPIPE just ends it).
  process.stdout.on('error', () => process.exit(code));
  process.stdout.write('', () => process.exit(code));
});
