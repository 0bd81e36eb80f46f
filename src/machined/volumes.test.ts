// The node's volumes: GPT images made with sgdisk, read through a fake /sys (image files as
// the device nodes), through a real loop device, and mounted for real (xfs on loop devices)
// by mountNodeVolumes.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../lib/log.ts';
import { initNative } from '../lib/native.ts';
import { MS, umount } from '../lib/sys.ts';
import { chooseDisk, findPartitions, mountNodeVolumes, type NodeDisk, type VolumeOps } from './volumes.ts';

const have = (tool: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

// scripts/deps.sh installs these: a missing one is a setup error, not a reason to skip.
for (const tool of ['sgdisk', 'losetup', 'mkfs.xfs']) {
  if (!have(tool)) throw new Error(`${tool} is missing: run scripts/deps.sh (packages gdisk, util-linux, xfsprogs)`);
}
const root = process.getuid?.() === 0;
const LINUX = '0fc63daf-8483-4772-8e79-3d69d8477de4';
const ESP = 'c12a7328-f81f-11d2-ba4b-00a0c93ec93b';
const BIOS_BOOT = '21686148-6449-6e6f-744e-656564454649';
const MiB = 1 << 20;

/** A sparse disk image laid out as disk.sh does, smaller: sgdisk's own GPT. */
function bronzeImage(file: string, opts: { names?: string[]; sizeMiB?: number } = {}): void {
  const names = opts.names ?? ['EFI', 'BIOS', 'BOOT', 'META', 'STATE', 'EPHEMERAL'];
  fs.writeFileSync(file, '');
  fs.truncateSync(file, (opts.sizeMiB ?? 128) * MiB);
  const sizes = ['+4MiB', '+1MiB', '+8MiB', '+1MiB', '+40MiB', '0'];
  const types = ['EF00', 'EF02', '8300', '8300', '8300', '8300'];
  const args = ['--clear'];
  names.forEach((name, i) => args.push(`--new=${i + 1}:0:${sizes[i]}`, `--typecode=${i + 1}:${types[i]}`, `--change-name=${i + 1}:${name}`));
  execFileSync('sgdisk', [...args, file], { stdio: 'pipe' });
}

/** A fake /sys/class/block entry: a disk with its size, and the partitions the kernel would show. */
function fakeDisk(sys: string, name: string, sectors: number, partitions: Array<{ name: string; number: number }> = []): void {
  const dir = path.join(sys, 'class', 'block', name);
  fs.mkdirSync(path.join(dir, 'queue'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'size'), `${sectors}\n`);
  fs.writeFileSync(path.join(dir, 'queue', 'logical_block_size'), '512\n');
  for (const p of partitions) {
    // Under the disk's directory, and in class/block as well (as in the real /sys).
    for (const d of [path.join(dir, p.name), path.join(sys, 'class', 'block', p.name)]) {
      fs.mkdirSync(d, { recursive: true });
      fs.writeFileSync(path.join(d, 'partition'), `${p.number}\n`);
      fs.writeFileSync(path.join(d, 'size'), '2048\n');
    }
  }
}

function memoryLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => lines.push(`info: ${m}`),
    warn: (m) => lines.push(`warn: ${m}`),
    error: (m) => lines.push(`error: ${m}`),
  };
}

function partInfo(image: string, n: number): { first: number; last: number } {
  const text = execFileSync('sgdisk', [`--info=${n}`, image], { encoding: 'utf8' });
  return { first: Number(/First sector: (\d+)/.exec(text)![1]), last: Number(/Last sector: (\d+)/.exec(text)![1]) };
}

describe('findPartitions', () => {
  let tmp: string;
  let sys: string;
  let dev: string;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-volumes-'));
    sys = path.join(tmp, 'sys');
    dev = path.join(tmp, 'dev');
    fs.mkdirSync(dev);
    // fakea: a Bronze disk; the kernel shows every partition but META.
    bronzeImage(path.join(dev, 'fakea'));
    fakeDisk(sys, 'fakea', (128 * MiB) / 512, [1, 2, 3, 5, 6].map((n) => ({ name: `fakea${n}`, number: n })));
    // fakeb: blank; fakec: GPT with other names; fakesr: no medium; faked: no device node.
    fs.writeFileSync(path.join(dev, 'fakeb'), Buffer.alloc(MiB));
    fakeDisk(sys, 'fakeb', MiB / 512);
    bronzeImage(path.join(dev, 'fakec'), { names: ['ESP', 'root', 'home'] });
    fakeDisk(sys, 'fakec', (128 * MiB) / 512);
    fs.writeFileSync(path.join(dev, 'fakesr'), '');
    fakeDisk(sys, 'fakesr', 0);
    fakeDisk(sys, 'faked', 2048);
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('finds the Bronze partitions by GPT name on the disks that have them', async () => {
    const disks = await findPartitions(sys, dev);
    expect(disks.map((d) => d.disk)).toEqual(['fakea']);
    const d = disks[0]!;
    expect(d.device).toBe(path.join(dev, 'fakea'));
    expect(d.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(Object.keys(d.partitions)).toEqual(['EFI', 'BIOS', 'BOOT', 'META', 'STATE', 'EPHEMERAL']);
    expect(d.partitions.EFI).toMatchObject({ number: 1, name: 'fakea1', device: path.join(dev, 'fakea1'), type: ESP, start: MiB, size: 4 * MiB });
    expect(d.partitions.BIOS).toMatchObject({ number: 2, type: BIOS_BOOT, size: MiB });
    expect(d.partitions.STATE).toMatchObject({ number: 5, name: 'fakea5', device: path.join(dev, 'fakea5'), type: LINUX, size: 40 * MiB });
    expect(d.partitions.EPHEMERAL).toMatchObject({ number: 6, name: 'fakea6', device: path.join(dev, 'fakea6') });
    // In the table, but the kernel shows no partition device for it.
    expect(d.partitions.META).toMatchObject({ number: 4 });
    expect(d.partitions.META!.device).toBeUndefined();
  });

  it('finds nothing without a /sys', async () => {
    expect(await findPartitions(path.join(tmp, 'nowhere'), dev)).toEqual([]);
  });

  it.skipIf(!root)('reads a real loop device', async () => {
    const image = path.join(tmp, 'loop.raw');
    bronzeImage(image);
    const loop = execFileSync('losetup', ['--find', '--show', '--partscan', image], { encoding: 'utf8' }).trim();
    try {
      const name = path.basename(loop);
      const disk = (await findPartitions('/sys', '/dev')).find((d) => d.disk === name);
      expect(disk, `${loop} among the disks found`).toBeDefined();
      expect(disk!.device).toBe(loop);
      expect(Object.keys(disk!.partitions)).toEqual(['EFI', 'BIOS', 'BOOT', 'META', 'STATE', 'EPHEMERAL']);
      expect(disk!.partitions.STATE).toMatchObject({ number: 5, size: 40 * MiB });
      // Partition devices exist only where the kernel reads GPT itself (CONFIG_EFI_PARTITION).
      if (fs.existsSync(`/sys/class/block/${name}p5`)) expect(disk!.partitions.STATE!.device).toBe(`${loop}p5`);
      else expect(disk!.partitions.STATE!.device).toBeUndefined();
    } finally {
      execFileSync('losetup', ['-d', loop]);
    }
  });
});

describe('chooseDisk', () => {
  const disk = (name: string, labels: string[], devices = true): NodeDisk => ({
    disk: name,
    device: `/dev/${name}`,
    uuid: '',
    partitions: Object.fromEntries(
      labels.map((l, i) => [l, { label: l, number: i + 1, start: 0, size: 0, uuid: '', type: '', ...(devices ? { device: `/dev/${name}${i + 1}` } : {}) }]),
    ),
  });
  it('prefers an installed disk (BOOT) whose partitions the kernel shows, then the first', () => {
    expect(chooseDisk([])).toBeUndefined();
    expect(chooseDisk([disk('sda', ['STATE']), disk('sdb', ['STATE'])])?.disk).toBe('sda');
    expect(chooseDisk([disk('sda', ['STATE', 'EPHEMERAL']), disk('sdb', ['BOOT', 'STATE'])])?.disk).toBe('sdb');
    // A whole-disk mapping (dm-0) of the same disk carries the same GPT but no partition devices.
    expect(chooseDisk([disk('dm-0', ['BOOT', 'STATE'], false), disk('vda', ['BOOT', 'STATE'])])?.disk).toBe('vda');
  });
});

describe('mountNodeVolumes', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-volumes-mount-'));
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  function layout(name: string, disks: Array<{ name: string; names?: string[] }>) {
    const sys = path.join(tmp, name, 'sys');
    const dev = path.join(tmp, name, 'dev');
    fs.mkdirSync(dev, { recursive: true });
    for (const d of disks) {
      bronzeImage(path.join(dev, d.name), d.names ? { names: d.names } : {});
      fakeDisk(sys, d.name, (128 * MiB) / 512, (d.names ?? ['1', '2', '3', '4', '5', '6']).map((_, i) => ({ name: `${d.name}${i + 1}`, number: i + 1 })));
    }
    const targets = { STATE: path.join(tmp, name, 'state'), EPHEMERAL: path.join(tmp, name, 'var') };
    return { sys, dev, targets };
  }

  it('mounts STATE and EPHEMERAL (xfs, nosuid, nodev) and logs each', async () => {
    const { sys, dev, targets } = layout('one', [{ name: 'vdx' }]);
    const calls: unknown[][] = [];
    const log = memoryLog();
    const r = await mountNodeVolumes(log, { sysRoot: sys, devRoot: dev, targets, mount: (...a) => void calls.push(a), replace: () => {} });
    expect(calls).toEqual([
      [path.join(dev, 'vdx5'), targets.STATE, 'xfs', MS.NOSUID | MS.NODEV],
      [path.join(dev, 'vdx6'), targets.EPHEMERAL, 'xfs', MS.NOSUID | MS.NODEV],
    ]);
    expect(r.disk?.disk).toBe('vdx');
    expect(r.mounted.map((m) => m.label)).toEqual(['STATE', 'EPHEMERAL']);
    expect(log.lines).toContain(`info: mounted STATE (${path.join(dev, 'vdx5')}) at ${targets.STATE}`);
    expect(log.lines).toContain(`info: mounted EPHEMERAL (${path.join(dev, 'vdx6')}) at ${targets.EPHEMERAL}`);
    expect(fs.statSync(targets.STATE).mode & 0o777).toBe(0o700);
  });

  it('mounts nothing without Bronze partitions', async () => {
    const { sys, dev, targets } = layout('none', [{ name: 'vdy', names: ['ESP', 'root'] }]);
    const calls: unknown[][] = [];
    const log = memoryLog();
    const r = await mountNodeVolumes(log, { sysRoot: sys, devRoot: dev, targets, mount: (...a) => void calls.push(a), replace: () => {} });
    expect(calls).toEqual([]);
    expect(r.mounted).toEqual([]);
    expect(r.disk).toBeUndefined();
    expect(r.statuses.STATE).toMatchObject({ phase: 'missing', mountSpec: { targetPath: '/system/state' } });
    expect(r.statuses.EPHEMERAL).toMatchObject({ phase: 'missing', mountSpec: { targetPath: '/var' } });
    expect(log.lines.join('\n')).toMatch(/no disk with Bronze partitions/);
  });

  it('prefers the disk with BOOT, warns about others, and survives a failed mount', async () => {
    const { sys, dev, targets } = layout('two', [
      { name: 'sda', names: ['STATE', 'EPHEMERAL'] },
      { name: 'sdb', names: ['EFI', 'BIOS', 'BOOT', 'META', 'STATE'] },
    ]);
    const log = memoryLog();
    const r = await mountNodeVolumes(log, {
      sysRoot: sys,
      devRoot: dev,
      targets,
      replace: () => {},
      mount: () => {
        throw new Error('mount: EINVAL');
      },
    });
    expect(r.disk?.disk).toBe('sdb');
    expect(r.mounted).toEqual([]);
    const text = log.lines.join('\n');
    expect(text).toMatch(/warn: volumes: ignoring .*\/sda, which also has Bronze partitions/);
    expect(text).toMatch(/error: mount STATE \(.*\/sdb5\) at .*: mount: EINVAL; .* stays in memory/);
    expect(text).toMatch(/warn: volumes: no EPHEMERAL partition on .*\/sdb: .* stays in memory/);
  });

  it('opens an encrypted volume, encrypts one a wipe erased, and leaves a filesystem that should be encrypted alone', async () => {
    const { sys, dev, targets } = layout('encrypted', [{ name: 'vde' }]);
    const calls: string[] = [];
    const content: Record<string, 'luks' | 'erased' | 'blank' | 'other'> = { [path.join(dev, 'vde5')]: 'luks', [path.join(dev, 'vde6')]: 'erased' };
    const ops: VolumeOps = {
      content: (d) => content[d] ?? 'other',
      open: (d, size, label) => (calls.push(`open ${label} ${d} ${size}`), { device: '/dev/dm-0', slot: 0 }),
      format: (d, _size, label, cfg) => (calls.push(`format ${label} ${d} slots ${cfg.keys.map((k) => k.slot)}`), { device: '/dev/dm-1', slot: 2 }),
      close: (label) => void calls.push(`close ${label}`),
      mkfs: async (d, label) => void calls.push(`mkfs ${label} ${d}`),
    };
    const cfg = { keys: [{ slot: 2, nodeID: {} }] };
    const mounts: unknown[][] = [];
    const log = memoryLog();
    const r = await mountNodeVolumes(log, { sysRoot: sys, devRoot: dev, targets, ops, encryption: () => cfg, mount: (...a) => void mounts.push(a), replace: () => {} });
    expect(calls).toEqual([`open STATE ${path.join(dev, 'vde5')} ${40 * MiB}`, `format EPHEMERAL ${path.join(dev, 'vde6')} slots 2`, 'mkfs EPHEMERAL /dev/dm-1']);
    expect(mounts.map((m) => m[0])).toEqual(['/dev/dm-0', '/dev/dm-1']);
    expect(r.statuses.STATE).toMatchObject({ phase: 'ready', location: path.join(dev, 'vde5'), mountLocation: '/dev/dm-0', encryptionProvider: 'luks2' });
    expect(r.statuses.EPHEMERAL).toMatchObject({ phase: 'ready', mountLocation: '/dev/dm-1', encryptionProvider: 'luks2' });
    expect(log.lines.join('\n')).toMatch(/mounted STATE \(\/dev\/dm-0, encrypted on .*vde5\)/);

    // Erased without settings: a plain xfs. Zeroes that no wipe left: not formatted, with or without settings.
    calls.length = 0;
    const r1 = await mountNodeVolumes(memoryLog(), { sysRoot: sys, devRoot: dev, targets, ops, encryption: (label) => (label === 'STATE' ? cfg : undefined), mount: () => {}, replace: () => {} });
    expect(calls).toEqual([`open STATE ${path.join(dev, 'vde5')} ${40 * MiB}`, `mkfs EPHEMERAL ${path.join(dev, 'vde6')}`]);
    expect(r1.statuses.EPHEMERAL).toMatchObject({ phase: 'ready', mountLocation: path.join(dev, 'vde6') });
    expect(r1.statuses.EPHEMERAL?.encryptionProvider).toBeUndefined();
    content[path.join(dev, 'vde6')] = 'blank';
    calls.length = 0;
    const r1b = await mountNodeVolumes(memoryLog(), { sysRoot: sys, devRoot: dev, targets, ops, encryption: () => cfg, mount: () => {}, replace: () => {} });
    expect(calls).toEqual([`open STATE ${path.join(dev, 'vde5')} ${40 * MiB}`]);
    expect(r1b.statuses.EPHEMERAL).toMatchObject({ phase: 'failed', errorMessage: expect.stringMatching(/holds neither LUKS2 nor a filesystem, but its settings .* ask for it encrypted/) });

    // A filesystem where encryption is asked for, and LUKS without settings: neither is touched.
    content[path.join(dev, 'vde5')] = 'other';
    content[path.join(dev, 'vde6')] = 'luks';
    calls.length = 0;
    mounts.length = 0;
    const log2 = memoryLog();
    const r2 = await mountNodeVolumes(log2, { sysRoot: sys, devRoot: dev, targets, ops, encryption: (label) => (label === 'STATE' ? cfg : undefined), mount: (...a) => void mounts.push(a), replace: () => {} });
    expect(calls).toEqual([]);
    expect(mounts).toEqual([]);
    expect(r2.statuses.STATE).toMatchObject({ phase: 'failed', errorMessage: expect.stringMatching(/holds a filesystem \(or a format that was cut off\), but its settings \(recorded in META\) ask for it encrypted: .*reset --system-labels-to-wipe STATE/) });
    expect(r2.statuses.EPHEMERAL).toMatchObject({ phase: 'failed', errorMessage: expect.stringMatching(/is encrypted \(LUKS2\), but no encryption settings were found for it \(machine.systemDiskEncryption.ephemeral or a VolumeConfig for EPHEMERAL, in the configuration on STATE\): it is left closed; `bronzectl reset --system-labels-to-wipe EPHEMERAL --reboot` erases it/) });
    expect(log2.lines.join('\n')).toMatch(/error: volumes: .*EPHEMERAL.*; \/var stays in memory: what is written to \/var now is lost/);

    // Settings that do not parse fail that volume alone; a key that opens nothing too.
    content[path.join(dev, 'vde5')] = 'luks';
    const r3 = await mountNodeVolumes(memoryLog(), {
      sysRoot: sys,
      devRoot: dev,
      targets,
      ops: { ...ops, open: () => { throw new Error('failed to open encrypted STATE: slot 0 (nodeID): no keyslot opens with this key'); } },
      encryption: (label) => {
        if (label === 'EPHEMERAL') throw new Error('bad record');
        return cfg;
      },
      mount: () => {},
      replace: () => {},
    });
    expect(r3.statuses.STATE).toMatchObject({ phase: 'failed', encryptionProvider: 'luks2', errorMessage: expect.stringMatching(/no keyslot opens/) });
    expect(r3.statuses.EPHEMERAL).toMatchObject({ phase: 'failed', errorMessage: "EPHEMERAL's encryption settings: bad record" });
  });

  it.skipIf(!root)('mounts real xfs volumes', async () => {
    // Each partition through its own loop device (by offset), standing in for the kernel's
    // partition devices, which kernels without GPT support do not make.
    await initNative();
    const { sys, dev, targets } = layout('real', [{ name: 'vdz' }]);
    const image = path.join(dev, 'vdz');
    const loops: string[] = [];
    try {
      for (const n of [5, 6]) {
        const { first, last } = partInfo(image, n);
        const loop = execFileSync('losetup', ['--find', '--show', '--offset', String(first * 512), '--sizelimit', String((last - first + 1) * 512), image], { encoding: 'utf8' }).trim();
        loops.push(loop);
        execFileSync('mkfs.xfs', ['-q', '-f', loop], { env: { ...process.env, TEST_DIR: '1', TEST_DEV: '1', QA_CHECK_FS: '1' }, stdio: 'pipe' });
        fs.rmSync(path.join(dev, `vdz${n}`), { force: true });
        fs.symlinkSync(loop, path.join(dev, `vdz${n}`));
      }
      const log = memoryLog();
      const r = await mountNodeVolumes(log, { sysRoot: sys, devRoot: dev, targets, replace: () => {} });
      try {
        expect(r.mounted.map((m) => m.label), log.lines.join('\n')).toEqual(['STATE', 'EPHEMERAL']);
        const mounts = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n');
        for (const t of [targets.STATE, targets.EPHEMERAL]) {
          const line = mounts.find((l) => l.split(' ')[4] === t);
          expect(line, t).toBeDefined();
          expect(line).toMatch(/ - xfs /);
          expect(line!.split(' ')[5]).toMatch(/nosuid/);
          expect(line!.split(' ')[5]).toMatch(/nodev/);
        }
        fs.writeFileSync(path.join(targets.STATE, 'config.yaml'), 'kept\n');
      } finally {
        for (const m of r.mounted.reverse()) umount(m.target);
      }
    } finally {
      for (const l of loops) execFileSync('losetup', ['-d', l]);
    }
  });
});
