// notifyReady() in a real child process, with and without the pipe a supervisor gives it.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { READY_FD_ENV, READY_STDIO, withReadyFd } from './ready.ts';

const fixture = fileURLToPath(new URL('../../test/fixtures/ready/notify.ts', import.meta.url));

function read(stream: Readable | null | undefined): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    if (!stream) return resolve(text);
    stream.on('data', (c: Buffer) => (text += c.toString()));
    stream.on('end', () => resolve(text));
    stream.on('error', () => resolve(text));
  });
}

async function run(env: Record<string, string>, withPipe: boolean) {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], { env, stdio: withPipe ? READY_STDIO : ['ignore', 'pipe', 'pipe'] });
  const [out, err, ready] = await Promise.all([read(child.stdout), read(child.stderr), withPipe ? read(child.stdio[3] as Readable) : Promise.resolve(undefined)]);
  const code = await new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', resolve)));
  return { code, err, ready, said: JSON.parse(out.trim() || 'null') as { told: boolean; left: string | null } };
}

const base = (): Record<string, string> => Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && e[0] !== READY_FD_ENV));

describe('notifyReady', () => {
  it('writes READY=1 to the ready pipe once, closes it, and leaves nothing for its own children', async () => {
    const r = await run(withReadyFd(base()), true);
    expect(r.code, r.err).toBe(0);
    expect(r.ready).toBe('READY=1\n');
    expect(r.said).toEqual({ told: true, left: null });
  });

  it('says false, and does not fail, when no supervisor asked or its pipe is not there', async () => {
    const none = await run(base(), false);
    expect(none.code, none.err).toBe(0);
    expect(none.said).toEqual({ told: false, left: null });
    // The variable names descriptor 3, but the process was started without it (EBADF).
    const missing = await run(withReadyFd(base()), false);
    expect(missing.code, missing.err).toBe(0);
    expect(missing.said).toEqual({ told: false, left: null });
    // A value naming stdio is never written to.
    const stdio = await run({ ...base(), [READY_FD_ENV]: '1' }, false);
    expect(stdio.said).toEqual({ told: false, left: null });
  });
});
