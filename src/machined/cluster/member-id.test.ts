import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadOrCreateMemberId, memberIdReader } from './member-id.ts';

describe('the member id in STATE', () => {
  const dirs: string[] = [];
  const tmp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'member-id-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('is made once (128 random bits, a 0600 file) and read back unchanged', () => {
    const dir = tmp();
    const id = loadOrCreateMemberId(dir);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    const st = fs.statSync(path.join(dir, 'member-id'));
    expect(st.mode & 0o777).toBe(0o600);
    expect(loadOrCreateMemberId(dir)).toBe(id);
    expect(fs.readdirSync(dir)).toEqual(['member-id']); // no temporary file left
    // Another STATE, another id.
    expect(loadOrCreateMemberId(tmp())).not.toBe(id);
  });

  it('replaces a file that holds no id', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'member-id'), 'not an id\n');
    const id = loadOrCreateMemberId(dir);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(fs.readFileSync(path.join(dir, 'member-id'), 'utf8')).toBe(`${id}\n`);
  });

  it('without a writable STATE: a random id for this boot, warned once, never changing within it', () => {
    const dir = tmp();
    const file = path.join(dir, 'not-a-dir');
    fs.writeFileSync(file, '');
    const warnings: string[] = [];
    const read = memberIdReader(path.join(file, 'state'), { warn: (m: string) => warnings.push(m) } as never);
    const a = read();
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(read()).toBe(a);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/member id: cannot keep it in .*not-a-dir\/state\/member-id/);
  });
});
