import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { containerLogPath, logURI, readLog, tailOffset, trimLog } from './logs.ts';

const dirs: string[] = [];
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-logs-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function collect(it: AsyncIterable<Uint8Array>): Promise<string> {
  let s = '';
  for await (const c of it) s += Buffer.from(c).toString();
  return s;
}

describe('container logs', () => {
  it('paths and URIs', () => {
    expect(containerLogPath('/var/log/containers', 'taloscontainers', 'web')).toBe('/var/log/containers/taloscontainers/web.log');
    expect(() => containerLogPath('/x', 'ns', '../etc')).toThrow();
    expect(logURI('/var/log/containers/ns/web.log')).toBe('file:///var/log/containers/ns/web.log');
  });

  it('tails the last lines, with or without a final newline', () => {
    const f = path.join(tmp(), 'a.log');
    fs.writeFileSync(f, 'one\ntwo\nthree\n');
    const fd = fs.openSync(f, 'r');
    expect(tailOffset(fd, 14, 1)).toBe(8);
    expect(tailOffset(fd, 14, 2)).toBe(4);
    expect(tailOffset(fd, 14, 5)).toBe(0);
    expect(tailOffset(fd, 14, 0)).toBe(14);
    expect(tailOffset(fd, 14, -1)).toBe(0);
    fs.closeSync(fd);
    fs.writeFileSync(f, 'one\ntwo');
    const fd2 = fs.openSync(f, 'r');
    expect(tailOffset(fd2, 7, 1)).toBe(4);
    fs.closeSync(fd2);
  });

  it('tails across chunk boundaries', async () => {
    const f = path.join(tmp(), 'big.log');
    const lines = Array.from({ length: 20000 }, (_, i) => `line ${i}`);
    fs.writeFileSync(f, lines.join('\n') + '\n');
    expect(await collect(readLog(f, { follow: false, tailLines: 3 }))).toBe('line 19997\nline 19998\nline 19999\n');
    expect((await collect(readLog(f, { follow: false, tailLines: -1 }))).length).toBe(fs.statSync(f).size);
  });

  it('follows appends and truncation until aborted', async () => {
    const f = path.join(tmp(), 'f.log');
    fs.writeFileSync(f, 'old\n');
    const ac = new AbortController();
    const got: string[] = [];
    const done = (async () => {
      for await (const c of readLog(f, { follow: true, tailLines: 1, signal: ac.signal, pollMs: 20 })) got.push(Buffer.from(c).toString());
    })();
    await new Promise((r) => setTimeout(r, 60));
    fs.appendFileSync(f, 'new\n');
    await new Promise((r) => setTimeout(r, 80));
    expect(trimLog(f, 4)).toBe(true);
    expect(fs.readFileSync(`${f}.1`, 'utf8')).toBe('old\nnew\n');
    fs.appendFileSync(f, 'after\n');
    await new Promise((r) => setTimeout(r, 80));
    ac.abort();
    await done;
    expect(got.join('')).toBe('old\nnew\nafter\n');
    expect(trimLog(f, 1 << 20)).toBe(false);
  });

  it('a missing log is an error without follow', async () => {
    await expect(collect(readLog('/nonexistent/x.log', { follow: false, tailLines: 10 }))).rejects.toThrow(/no log/);
  });
});
