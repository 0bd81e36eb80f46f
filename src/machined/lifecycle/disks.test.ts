import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeGpt } from '../../disk/gpt-write.ts';
import { planLayout } from '../../disk/layout.ts';
import { DiskError, describeContents, listDisks, resolveDisk } from './disks.ts';

/** A fake /sys/class/block and /dev: image files stand in for the device nodes. */
function fakeSystem(root: string, disks: Record<string, { bytes: number; parts?: string[]; ro?: boolean }>) {
  const sys = path.join(root, 'sys');
  const dev = path.join(root, 'dev');
  fs.mkdirSync(path.join(sys, 'class', 'block'), { recursive: true });
  fs.mkdirSync(dev, { recursive: true });
  for (const [name, d] of Object.entries(disks)) {
    const dir = path.join(sys, 'class', 'block', name);
    fs.mkdirSync(path.join(dir, 'queue'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'size'), `${d.bytes / 512}\n`);
    fs.writeFileSync(path.join(dir, 'ro'), d.ro ? '1\n' : '0\n');
    fs.writeFileSync(path.join(dir, 'queue', 'logical_block_size'), '512\n');
    const img = path.join(dev, name);
    fs.closeSync(fs.openSync(img, 'w'));
    fs.truncateSync(img, d.bytes);
    for (const [i, p] of (d.parts ?? []).entries()) {
      fs.mkdirSync(path.join(sys, 'class', 'block', p), { recursive: true });
      fs.writeFileSync(path.join(sys, 'class', 'block', p, 'partition'), `${i + 1}\n`);
      fs.writeFileSync(path.join(sys, 'class', 'block', p, 'size'), '2048\n');
      fs.writeFileSync(path.join(dev, p), '');
    }
  }
  fs.mkdirSync(path.join(dev, 'disk', 'by-id'), { recursive: true });
  return { sysRoot: sys, devRoot: dev };
}

describe('install disks', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-disks-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('resolves a device or a link to it to the whole disk, with its size', () => {
    const o = fakeSystem(root, { vda: { bytes: 2 * 2 ** 30, parts: ['vda1'] }, sr0: { bytes: 0 } });
    fs.symlinkSync('../../vda', path.join(o.devRoot, 'disk', 'by-id', 'virtio-abc'));
    const d = resolveDisk(path.join(o.devRoot, 'disk', 'by-id', 'virtio-abc'), o);
    expect(d).toMatchObject({ name: 'vda', device: path.join(o.devRoot, 'vda'), bytes: 2 * 2 ** 30, sectorSize: 512, readOnly: false });
    expect(listDisks(o).map((x) => x.name)).toEqual(['vda']);
  });

  it('names what is wrong with a path that is no whole disk', () => {
    const o = fakeSystem(root, { vda: { bytes: 2 * 2 ** 30, parts: ['vda1'] }, sr0: { bytes: 0 } });
    expect(() => resolveDisk('vda', o)).toThrow(/not an absolute device path/);
    expect(() => resolveDisk(path.join(o.devRoot, 'vdz'), o)).toThrow(/no such device \(disks: .*vda\)/);
    expect(() => resolveDisk(path.join(o.devRoot, 'vda1'), o)).toThrow(/is a partition \(vda1\): give the whole disk/);
    expect(() => resolveDisk(path.join(o.devRoot, 'sr0'), o)).toThrow(/no medium/);
    expect(() => resolveDisk(path.join(o.devRoot, 'sr0'), o)).toThrow(DiskError);
  });

  it('sees a blank disk as blank, and describes one that holds something', async () => {
    const o = fakeSystem(root, { vda: { bytes: 2 * 2 ** 30 }, vdb: { bytes: 2 * 2 ** 30 }, vdc: { bytes: 64 << 20 }, vdd: { bytes: 64 << 20 } });
    expect(await describeContents(resolveDisk(path.join(o.devRoot, 'vda'), o))).toBeUndefined();

    const fd = fs.openSync(path.join(o.devRoot, 'vdb'), 'r+');
    writeGpt(fd, 2 * 2 ** 30, planLayout(2 * 2 ** 30));
    fs.closeSync(fd);
    expect(await describeContents(resolveDisk(path.join(o.devRoot, 'vdb'), o))).toMatch(/GPT partition table with 6 partition\(s\) \(EFI, BIOS, BOOT, META, STATE, EPHEMERAL\)/);

    fs.writeFileSync(path.join(o.devRoot, 'vdc'), Buffer.from('hello'), { flag: 'r+' });
    expect(await describeContents(resolveDisk(path.join(o.devRoot, 'vdc'), o))).toMatch(/non-zero bytes in its first MiB/);

    const last = fs.openSync(path.join(o.devRoot, 'vdd'), 'r+');
    fs.writeSync(last, Buffer.from('tail'), 0, 4, (64 << 20) - 100);
    fs.closeSync(last);
    expect(await describeContents(resolveDisk(path.join(o.devRoot, 'vdd'), o))).toMatch(/last MiB/);
  });
});
