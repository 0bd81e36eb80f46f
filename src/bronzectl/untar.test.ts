import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { pack } from 'tar-stream';
import { afterEach, describe, expect, it } from 'vitest';
import { extractTarGz } from './untar.ts';

type Entry = { name: string; type?: 'file' | 'directory' | 'symlink'; body?: string; linkname?: string };

async function tarGz(entries: Entry[]): Promise<Buffer[]> {
  const p = pack();
  for (const e of entries) {
    await new Promise<void>((resolve, reject) =>
      p.entry({ name: e.name, type: e.type ?? 'file', ...(e.linkname ? { linkname: e.linkname } : {}) }, e.body ?? '', (err) => (err ? reject(err) : resolve())),
    );
  }
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const c of p) chunks.push(c as Buffer);
  const gz = zlib.gzipSync(Buffer.concat(chunks));
  return [gz.subarray(0, 10), gz.subarray(10)]; // in two chunks, as a stream delivers it
}

async function* from(chunks: Buffer[]) {
  for (const c of chunks) yield c;
}

let dir: string | undefined;
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('extractTarGz', () => {
  it('writes directories, files and symlinks under the directory', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-untar-'));
    const n = await extractTarGz(
      from(await tarGz([{ name: './', type: 'directory' }, { name: 'a/', type: 'directory' }, { name: 'a/f', body: 'hello' }, { name: 'l', type: 'symlink', linkname: 'a/f' }])),
      dir,
    );
    expect(n).toBe(4);
    expect(fs.readFileSync(path.join(dir, 'a/f'), 'utf8')).toBe('hello');
    expect(fs.readlinkSync(path.join(dir, 'l'))).toBe('a/f');
  });

  it('refuses entries that would land outside: absolute, "..", or through a symlink', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-untar-'));
    const target = path.join(dir, 'into');
    fs.mkdirSync(target);
    await expect(extractTarGz(from(await tarGz([{ name: '../escaped', body: 'x' }])), target)).rejects.toThrow(/"..\/escaped" points outside/);
    await expect(extractTarGz(from(await tarGz([{ name: '/tmp/abs', body: 'x' }])), target)).rejects.toThrow(/points outside/);
    await expect(extractTarGz(from(await tarGz([{ name: 'up', type: 'symlink', linkname: '..' }, { name: 'up/escaped', body: 'x' }])), target)).rejects.toThrow(/"up\/escaped" resolves outside/);
    expect(fs.existsSync(path.join(dir, 'escaped'))).toBe(false);
  });

  it('fails on a stream that is not gzip', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-untar-'));
    await expect(extractTarGz(from([Buffer.from('not gzip at all')]), dir)).rejects.toThrow(/incorrect header check|unknown compression/);
  });
});
