import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GO_MODE, READ_CHUNK, filesHandlers, fsError, goFileMode, listOptions } from './files.ts';
import { collect } from './testing.ts';

describe('goFileMode', () => {
  it("encodes st_mode as Go's fs.FileMode", () => {
    expect(goFileMode(0o100644)).toBe(0o644);
    expect(goFileMode(0o040755)).toBe((GO_MODE.DIR | 0o755) >>> 0);
    expect(goFileMode(0o120777)).toBe(GO_MODE.SYMLINK | 0o777);
    expect(goFileMode(0o020620)).toBe(GO_MODE.DEVICE | GO_MODE.CHAR_DEVICE | 0o620);
    expect(goFileMode(0o060660)).toBe(GO_MODE.DEVICE | 0o660);
    expect(goFileMode(0o010600)).toBe(GO_MODE.NAMED_PIPE | 0o600);
    expect(goFileMode(0o140755)).toBe(GO_MODE.SOCKET | 0o755);
    expect(goFileMode(0o104755)).toBe(GO_MODE.SETUID | 0o755);
    expect(goFileMode(0o041777)).toBe((GO_MODE.DIR | GO_MODE.STICKY | 0o777) >>> 0);
  });
});

describe('fsError', () => {
  it('maps errno to a status and names the operation and path', () => {
    const errno = (code: string, msg: string) => Object.assign(new Error(`${code}: ${msg}, open '/x'`), { code });
    expect(fsError(errno('EACCES', 'permission denied'), 'open', '/x')).toMatchObject({ code: 7, message: 'open /x: permission denied' });
    expect(fsError(errno('ENOENT', 'no such file or directory'), 'open', '/x')).toMatchObject({ code: 5 });
    expect(fsError(errno('EIO', 'i/o error'), 'read', '/x')).toMatchObject({ code: 13, message: 'read /x: i/o error' });
  });
});

describe('listOptions', () => {
  it('depth: 1 without recurse, unlimited with recurse and 0, else the depth; root defaults to /', () => {
    expect(listOptions({})).toEqual({ root: '/', maxDepth: 1, types: [] });
    expect(listOptions({ root: '/x', recurse: true })).toMatchObject({ maxDepth: -1 });
    expect(listOptions({ root: 'var/log', recurse: true, recursion_depth: 2, types: ['DIRECTORY', 2] })).toEqual({ root: '/var/log', maxDepth: 2, types: ['DIRECTORY', 'SYMLINK'] });
    expect(() => listOptions({ types: ['FIFO'] })).toThrow(/unknown file type/);
  });
});

const isRoot = process.getuid?.() === 0; // root reads anything

describe('List and Read', () => {
  let dir: string;
  const h = filesHandlers();
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-files-'));
    fs.mkdirSync(path.join(dir, 'b/c'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'a.txt'), 'hello');
    fs.writeFileSync(path.join(dir, 'b/c/deep.txt'), 'deep');
    fs.symlinkSync('a.txt', path.join(dir, 'link'));
    fs.mkdirSync(path.join(dir, 'locked'), { mode: 0o000 });
  });
  afterAll(() => {
    fs.chmodSync(path.join(dir, 'locked'), 0o755);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const names = (infos: Array<{ relative_name: string }>) => infos.map((i) => i.relative_name);

  it('lists the root and its entries in order, with FileInfo fields', async () => {
    const infos = await collect(h.List, { root: dir });
    expect(names(infos)).toEqual(['.', 'a.txt', 'b', 'link', 'locked']);
    const a = infos[1];
    const st = fs.statSync(path.join(dir, 'a.txt'));
    expect(a).toEqual({
      name: path.join(dir, 'a.txt'),
      relative_name: 'a.txt',
      size: 5,
      mode: st.mode & 0o777,
      modified: Math.floor(st.mtimeMs / 1000),
      is_dir: false,
      link: '',
      uid: st.uid,
      gid: st.gid,
    });
    expect(infos[0]).toMatchObject({ name: dir, is_dir: true });
    expect(infos[3]).toMatchObject({ link: 'a.txt', mode: GO_MODE.SYMLINK | 0o777 });
  });

  it('recurses, to a depth, and filters by type without pruning the walk', async () => {
    expect(names(await collect(h.List, { root: dir, recurse: true }))).toEqual(['.', 'a.txt', 'b', 'b/c', 'b/c/deep.txt', 'link', 'locked']);
    expect(names(await collect(h.List, { root: dir, recurse: true, recursion_depth: 2 }))).toEqual(['.', 'a.txt', 'b', 'b/c', 'link', 'locked']);
    expect(names(await collect(h.List, { root: dir, recurse: true, types: ['REGULAR'] }))).toEqual(['a.txt', 'b/c/deep.txt']);
  });

  it('a file as root lists that file', async () => {
    expect(await collect(h.List, { root: path.join(dir, 'a.txt') })).toEqual([expect.objectContaining({ relative_name: 'a.txt', size: 5 })]);
  });

  it.skipIf(isRoot)('an unreadable directory below the root is reported in its entry', async () => {
    const infos = await collect(h.List, { root: dir, recurse: true });
    expect(infos.find((i) => i.relative_name === 'locked' && i.error)).toBeDefined();
  });

  it('a missing root is NOT_FOUND naming it', async () => {
    const missing = path.join(dir, 'missing');
    await expect(collect(h.List, { root: missing })).rejects.toEqual({ code: 5, message: `lstat ${missing}: no such file or directory` });
  });

  it('Read streams the contents in chunks', async () => {
    const big = Buffer.alloc(READ_CHUNK * 2 + 10, 'x');
    fs.writeFileSync(path.join(dir, 'big'), big);
    const chunks = await collect(h.Read, { path: path.join(dir, 'big') });
    expect(chunks.map((c) => c.bytes.length)).toEqual([READ_CHUNK, READ_CHUNK, 10]);
    expect(Buffer.concat(chunks.map((c) => c.bytes)).equals(big)).toBe(true);
    expect(await collect(h.Read, { path: path.join(dir, 'link') })).toEqual([{ bytes: Buffer.from('hello') }]);
  });

  it('Read errors: missing, directory, not a regular file, no path', async () => {
    await expect(collect(h.Read, { path: path.join(dir, 'nope') })).rejects.toMatchObject({ code: 5, message: expect.stringContaining(path.join(dir, 'nope')) });
    await expect(collect(h.Read, { path: path.join(dir, 'b') })).rejects.toEqual({ code: 3, message: `read ${path.join(dir, 'b')}: is a directory` });
    await expect(collect(h.Read, { path: '/dev/null' })).rejects.toEqual({ code: 3, message: 'read /dev/null: not a regular file' });
    await expect(collect(h.Read, {})).rejects.toMatchObject({ code: 3 });
  });

  it.skipIf(isRoot)('Read without permission is PERMISSION_DENIED', async () => {
    fs.writeFileSync(path.join(dir, 'secret'), 's', { mode: 0o000 });
    await expect(collect(h.Read, { path: path.join(dir, 'secret') })).rejects.toMatchObject({ code: 7 });
  });
});
