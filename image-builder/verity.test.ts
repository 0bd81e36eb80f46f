// image-builder/verity.sh (veritysetup format over a real squashfs) against `veritysetup verify`,
// and the tree src/install/verity.ts recomputes in Node against the one veritysetup stored.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkVerity, verityLayout } from '../src/install/verity.ts';

const have = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
const ready = have('veritysetup') && have('gensquashfs');

describe.skipIf(!ready)('verity.sh', () => {
  let dir: string;
  let sqsh: string;
  let plain: Buffer;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verity-test-'));
    // Incompressible files: about 1.3 MB of squashfs, 2 levels of tree (over 128 blocks).
    const tree = path.join(dir, 'tree');
    fs.mkdirSync(path.join(tree, 'sbin'), { recursive: true });
    for (let i = 0; i < 5; i++) fs.writeFileSync(path.join(tree, 'sbin', `f${i}`), randomBytes(260_000 + i * 977));
    sqsh = path.join(dir, 'rootfs.sqsh');
    execFileSync('gensquashfs', ['--pack-dir', tree, '--defaults', 'mtime=0', '--all-root', '--quiet', '--force', sqsh]);
    plain = fs.readFileSync(sqsh);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const build = (file: string) => {
    const out = execFileSync('image-builder/verity.sh', [file, `${file}.roothash`], { encoding: 'utf8' });
    return { out, root: fs.readFileSync(`${file}.roothash`, 'utf8').trim() };
  };
  /** veritysetup verify on the data and tree in one file, as preinit's table has them. */
  const verify = (file: string, root: string) => {
    const offset = verityLayout(fs.readFileSync(file)).superblockOffset;
    return spawnSync('veritysetup', ['verify', `--hash-offset=${offset}`, file, file, root], { encoding: 'utf8' });
  };

  it('appends a tree that veritysetup verifies, and Node recomputes the same tree and root', () => {
    const { out, root } = build(sqsh);
    expect(root).toMatch(/^[0-9a-f]{64}$/);
    expect(out).toContain(`root hash ${root}`);
    const image = fs.readFileSync(sqsh);
    const layout = verityLayout(image);
    expect(layout.superblockOffset).toBe(Math.ceil(plain.length / 4096) * 4096);
    expect(image.subarray(0, plain.length).equals(plain), 'the squashfs itself is unchanged').toBe(true);
    // 1 superblock block + 3 level-0 blocks (>256 data blocks) + 1 top block.
    expect(image.length - layout.superblockOffset).toBe(4096 * (1 + Math.ceil(layout.dataBlocks / 128) + 1));
    expect(verify(sqsh, root).status).toBe(0);
    expect(checkVerity(image, root)).toEqual({ ok: true, rootHash: root });
    // The superblock's fields as veritysetup itself reads them.
    const dump = execFileSync('veritysetup', ['dump', `--hash-offset=${layout.superblockOffset}`, sqsh], { encoding: 'utf8' });
    expect(dump).toMatch(new RegExp(`Data blocks:\\s+${layout.dataBlocks}\\b`));
    expect(dump).toMatch(new RegExp(`Salt:\\s+${layout.salt.toString('hex')}`));
    expect(dump).toMatch(new RegExp(`UUID:\\s+${layout.uuid}`));
  });

  it('gives the same bytes again, on a rebuilt or an already verity-tailed file', () => {
    const first = fs.readFileSync(sqsh);
    const again = path.join(dir, 'again.sqsh');
    fs.writeFileSync(again, plain);
    expect(build(again).root).toBe(fs.readFileSync(`${sqsh}.roothash`, 'utf8').trim());
    expect(fs.readFileSync(again).equals(first)).toBe(true);
    build(again); // the tree is cut off and made again, not appended twice
    expect(fs.readFileSync(again).equals(first)).toBe(true);
  });

  it('a changed data byte or tree byte fails veritysetup verify and Node names the place', () => {
    const root = fs.readFileSync(`${sqsh}.roothash`, 'utf8').trim();
    const good = fs.readFileSync(sqsh);
    const layout = verityLayout(good);
    const data = Buffer.from(good);
    data[5000] = data[5000]! ^ 0x01;
    const bad = path.join(dir, 'bad-data.sqsh');
    fs.writeFileSync(bad, data);
    const v = verify(bad, root);
    expect(v.status).not.toBe(0);
    expect(v.stderr + v.stdout).toMatch(/Verification failed at position 4096/);
    expect(checkVerity(data, root)).toMatchObject({ ok: false, problem: 'data block 1 (bytes 4096 to 8191) does not match its hash in the tree' });

    const tree = Buffer.from(good);
    const at = layout.treeOffset + 10; // in the top level
    tree[at] = tree[at]! ^ 0x80;
    const badTree = path.join(dir, 'bad-tree.sqsh');
    fs.writeFileSync(badTree, tree);
    expect(verify(badTree, root).status).not.toBe(0);
    expect(checkVerity(tree, root)).toMatchObject({ ok: false, problem: expect.stringMatching(/level 1 of the stored hash tree/) });

    // Intact, but another root hash expected: nothing matches.
    const other = 'ab'.repeat(32);
    expect(verify(sqsh, other).status).not.toBe(0);
    expect(checkVerity(good, other)).toMatchObject({ ok: false, problem: `the image's root hash is ${root}, not the expected ${other}` });
  });

  it('refuses what is not a squashfs, and a squashfs without a tree', () => {
    const junk = path.join(dir, 'junk');
    fs.writeFileSync(junk, Buffer.alloc(8192, 1));
    const r = spawnSync('image-builder/verity.sh', [junk, `${junk}.roothash`], { encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/is not a squashfs/);
    expect(() => verityLayout(plain)).toThrow(/no dm-verity superblock/);
  });
});
