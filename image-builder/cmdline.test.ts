// image-builder/cmdline.sh: the full kernel command line, with exactly one root hash, the roothash file's.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = path.resolve('image-builder/cmdline.sh');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-cmdline-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const write = (name: string, text: string) => {
  fs.writeFileSync(path.join(dir, name), text);
  return path.join(dir, name);
};

describe('image-builder/cmdline.sh', () => {
  const hash = write('roothash', `${'ab'.repeat(32)}\n`);

  it('appends the root hash to the kernel\'s default, on one line', () => {
    const k = write('kernel.cmdline', 'console=ttyS0,115200  slab_nomerge\ninit_on_alloc=1\n');
    expect(execFileSync(SCRIPT, [k, hash], { encoding: 'utf8' })).toBe(`console=ttyS0,115200 slab_nomerge init_on_alloc=1 bronze.roothash=${'ab'.repeat(32)}\n`);
  });

  it('replaces a root hash the command line has already (one copied from another build)', () => {
    const c = write('cmdline', `console=ttyS0 bronze.roothash=${'cd'.repeat(32)} pti=on\n`);
    expect(execFileSync(SCRIPT, [c, hash], { encoding: 'utf8' })).toBe(`console=ttyS0 pti=on bronze.roothash=${'ab'.repeat(32)}\n`);
    expect(execFileSync(SCRIPT, [write('empty', ''), hash], { encoding: 'utf8' })).toBe(`bronze.roothash=${'ab'.repeat(32)}\n`);
  });

  it('refuses a root hash file that holds none, and a missing file', () => {
    const k = write('k2', 'console=ttyS0\n');
    const bad = spawnSync(SCRIPT, [k, write('bad', 'xyz\n')], { encoding: 'utf8' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/is not a root hash/);
    expect(spawnSync(SCRIPT, [path.join(dir, 'nope'), hash], { encoding: 'utf8' }).stderr).toMatch(/nope missing/);
  });
});
