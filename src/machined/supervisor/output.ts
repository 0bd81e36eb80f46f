// The output of a service's process: stdout and stderr cut into lines, the last lines kept per
// service, handed to the followers of its logs and to the supervisor's log.

import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { pushBounded, type Service } from './service.ts';

/** Output without a newline is cut into lines of at most this many characters. */
const MAX_LINE = 16 * 1024;

/** Calls onLine with every line of the stream (UTF-8, without its newline), to its end. */
export function captureLines(stream: Readable | null, onLine: (raw: string) => void): void {
  if (!stream) return;
  const decoder = new StringDecoder('utf8');
  let partial = '';
  stream.on('data', (chunk: Buffer) => {
    partial += decoder.write(chunk);
    let nl: number;
    while ((nl = partial.indexOf('\n')) !== -1) {
      onLine(partial.slice(0, nl));
      partial = partial.slice(nl + 1);
    }
    while (partial.length > MAX_LINE) {
      onLine(partial.slice(0, MAX_LINE));
      partial = partial.slice(MAX_LINE);
    }
  });
  stream.on('end', () => {
    partial += decoder.end();
    if (partial) onLine(partial);
    partial = '';
  });
  stream.on('error', () => {});
}

/**
 * Keeps one line of a service's output (the last `logLines`), hands it to the followers and to
 * `log` (prefixed with "<id>: "). A trailing carriage return is dropped.
 */
export function keepLine(svc: Service, raw: string, logLines: number, log: ((msg: string) => void) | undefined): void {
  const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  pushBounded(svc.logs, line, logLines);
  for (const follower of svc.followers) {
    try {
      follower(line);
    } catch {
      // a broken follower must not break capture
    }
  }
  log?.(`${svc.spec.id}: ${line}`);
}
