// Runs the real bronzectl (bin/bronzectl.mjs: the bundled CLI) as a separate process.
import { spawn } from 'node:child_process';
import path from 'node:path';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function bronzectl(args: string[], opts: { config?: string; timeoutMs?: number; env?: Record<string, string> } = {}): Promise<CliResult> {
  const argv = [path.resolve('bin/bronzectl.mjs'), ...(opts.config ? ['--bronzeconfig', opts.config] : []), ...args];
  return new Promise((resolve) => {
    const p = spawn(process.execPath, argv, { env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    p.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs a command until it succeeds (exit 0) or the time is up; returns the last result. */
export async function bronzectlUntilOk(args: string[], opts: { config?: string; timeoutMs: number }): Promise<CliResult> {
  const deadline = Date.now() + opts.timeoutMs;
  let last: CliResult;
  do {
    last = await bronzectl(args, { config: opts.config, timeoutMs: 30_000 });
    if (last.code === 0) return last;
    await new Promise((r) => setTimeout(r, 2000));
  } while (Date.now() < deadline);
  return last;
}

/** Runs fn every 2 s until ok says its result will do; throws, with the last output, after timeoutMs. */
export async function until(what: string, fn: () => Promise<CliResult>, ok: (r: CliResult) => boolean, timeoutMs: number): Promise<CliResult> {
  const deadline = Date.now() + timeoutMs;
  let last: CliResult;
  do {
    last = await fn();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 2000));
  } while (Date.now() < deadline);
  throw new Error(`${what}: not reached in ${timeoutMs} ms; last output:\n${last.stdout}\n${last.stderr}`);
}
