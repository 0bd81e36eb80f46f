// End-to-end: the root filesystem is verified with dm-verity on every boot, under QEMU/TCG.
//   1. Tampered root, direct kernel boot: the initramfs with one byte of rootfs.sqsh's squashfs
//      changed (hash tree and root hash as built), booted with the same kernel and command
//      line. The kernel's verity refuses the changed block, preinit names that block and the
//      root hash it expected, the kernel panics and machined never starts.
//   2. A copy of disk.raw with an upgrade staged into slot B (META says trying) whose initramfs
//      is that tampered one (with slot A's kernel and root hash), GRUB armed to try B once: B
//      stops in preinit the same way and records why on BOOT, the machine reboots, GRUB falls
//      back to slot A; `get bootstatus` has the upgrade failed with B's reason. A's root is
//      verified; machined reports it from the
//      kernel's device-mapper table (`bronzectl get rootfs`, in maintenance mode with
//      --insecure) and SecurityState says what the firmware says (no Secure Boot here).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QemuVM } from '../../image-builder/qemu.ts';
import { readMeta, writeMeta } from '../../src/install/meta.ts';
import { bronzectl, bronzectlUntilOk } from '../lib/bronzectl.ts';
import { consoleFile } from '../lib/console-log.ts';
import { freePort } from '../lib/ports.ts';
import { tamperedInitramfs, type TamperedRoot } from '../lib/tamper.ts';

const OUT = '_out/amd64';
const DISK = `${OUT}/disk.raw`;
const BOOT = 240_000;

/** Where partition n of a disk image is, in bytes. */
function partition(image: string, n: number): { offset: number; size: number } {
  const info = execFileSync('sgdisk', [`--info=${n}`, image], { encoding: 'utf8' });
  const first = Number(/First sector: (\d+)/.exec(info)![1]);
  const last = Number(/Last sector: (\d+)/.exec(info)![1]);
  return { offset: first * 512, size: (last - first + 1) * 512 };
}

/** Runs `fn` with BOOT (partition 3) of a disk image mounted, through a loop device at its offset. */
function withBootMounted(image: string, fn: (dir: string) => void): void {
  const boot = partition(image, 3);
  const loop = execFileSync('losetup', ['--find', '--show', '--offset', String(boot.offset), '--sizelimit', String(boot.size), image], { encoding: 'utf8' }).trim();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-boot-'));
  try {
    execFileSync('mount', ['-t', 'xfs', loop, dir]);
    try {
      fn(dir);
    } finally {
      execFileSync('umount', [dir]);
    }
  } finally {
    execFileSync('losetup', ['-d', loop]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('dm-verity root', () => {
  let dir: string;
  let roothash: string;
  let tampered: TamperedRoot;
  let initrd: string;
  const times: Record<string, number> = {};
  let vm: QemuVM | undefined;

  beforeAll(() => {
    for (const f of [DISK, `${OUT}/initramfs.xz`, `${OUT}/roothash`]) if (!fs.existsSync(f)) throw new Error(`${f} is missing: run \`make image\` first`);
    roothash = fs.readFileSync(`${OUT}/roothash`, 'utf8').trim();
    expect(roothash).toMatch(/^[0-9a-f]{64}$/);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-verity-'));
    tampered = tamperedInitramfs(`${OUT}/initramfs.xz`);
    initrd = path.join(dir, 'initramfs.cpio');
    fs.writeFileSync(initrd, tampered.cpio);
  });

  afterAll(() => {
    vm?.kill();
    console.log(`verity: times ${JSON.stringify(times)}`);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * The console of a boot that verity stopped: preinit names the block the kernel refused and
   * the root hash it expected, the kernel panics, and nothing from the root ran. The kernel's
   * own "data block N is corrupted" is logged when it arrives whole: its 8250 console drops
   * characters when QEMU's UART falls behind under TCG (CI once lost exactly that line), while
   * preinit writes through the tty, which waits instead.
   */
  const refused = async (v: QemuVM, from: number): Promise<number> => {
    const fatal = await v.waitFor(/bronze preinit: FATAL: the root filesystem does not match the root hash it was booted with/, BOOT, from);
    expect(v.lines[fatal]).toContain(`: data block ${tampered.block} (byte ${tampered.block * 4096}) of /rootfs.sqsh failed to read (Input/output error); expected root hash ${roothash}. Refusing to boot.`);
    const kernel = new RegExp(`device-mapper: verity: \\d+:\\d+: data block ${tampered.block} is corrupted`);
    console.log(`verity: the kernel's "data block ${tampered.block} is corrupted" line ${v.lines.slice(from, fatal).some((l) => kernel.test(l)) ? 'arrived whole' : 'was lost on its console'}`);
    const panic = await v.waitFor(/Kernel panic - not syncing: Attempted to kill init/, 60_000, fatal);
    const run = v.lines.slice(from, panic + 1);
    expect(run.some((l) => /machined|exec \/sbin\/init|bronze preinit: .* verified/.test(l)), 'nothing ran from the unverified root').toBe(false);
    return panic;
  };

  it('a tampered root does not boot: direct kernel, same kernel and command line', async () => {
    const t0 = Date.now();
    vm = new QemuVM({ apiPort: await freePort(), initrd, noReboot: true }, consoleFile('verity-tampered-kernel')).start();
    // The kernel's own console lines can lose characters under load (its 8250 console gives up
    // waiting on QEMU's UART), so the command line is checked where it is given, and preinit's
    // refusal below names the root hash it read from /proc/cmdline.
    expect(vm.args[vm.args.indexOf('-append') + 1]).toContain(`bronze.roothash=${roothash}`);
    await vm.waitFor(/Command line: /, BOOT);
    await refused(vm, 0);
    expect(await vm.waitExit(60_000), 'the panic reboots; -no-reboot ends QEMU').toBe(0);
    times['tampered root (kernel)'] = (Date.now() - t0) / 1000;
  }, BOOT + 120_000);

  it('a tampered slot B stops in preinit, which records why; GRUB falls back to slot A, whose verified root machined reports, with the failed upgrade and its reason', async () => {
    const copy = path.join(dir, 'disk.raw');
    execFileSync('cp', ['--sparse=always', DISK, copy]);
    // An upgrade staged into slot B (what machined's upgrade leaves: B's files, GRUB armed to
    // try B once, META recording the upgrade as trying), whose image was then corrupted.
    withBootMounted(copy, (boot) => {
      for (const f of ['vmlinuz', 'roothash.env']) fs.copyFileSync(path.join(boot, 'A', f), path.join(boot, 'B', f));
      fs.copyFileSync(initrd, path.join(boot, 'B', 'initramfs.xz'));
      execFileSync('grub-editenv', [path.join(boot, 'grub/grubenv'), 'set', 'next_entry=B', 'next_tries=1']);
    });
    const meta = partition(copy, 4);
    const staged = new Date().toISOString();
    writeMeta(copy, { ...Object.fromEntries(readMeta(copy, meta.offset, meta.size).values), 'slot.B.version': 'v0.0.0-tampered', 'upgrade.state': 'trying', 'upgrade.from': 'A', 'upgrade.to': 'B', 'upgrade.version': 'v0.0.0-tampered', 'upgrade.time': staged }, meta.offset, meta.size);
    const port = await freePort();
    const target = `127.0.0.1:${port}`;
    const t0 = Date.now();
    vm = new QemuVM({ apiPort: port, boot: { kind: 'disk', path: copy } }, consoleFile('verity-tampered-slot')).start();
    const tried = await vm.waitFor(/bronze: trying slot B/, BOOT);
    // GRUB's command line for B (the kernel echoes it; see above for why loosely): preinit's
    // refusal names the root hash it was given.
    await vm.waitFor(/Command line: BOOT_IMAGE=\/B\/vmlinuz /, BOOT, tried);
    const panic = await refused(vm, tried);
    expect(vm.lines.slice(tried, panic).some((l) => /bronze preinit: recorded the failure in \/dev\/vda3\/B\/boot-failure for the other slot/.test(l)), 'preinit recorded why B stopped').toBe(true);
    const a = await vm.waitFor(/bronze: booting slot A/, BOOT, panic);
    times['tampered slot B to slot A booting'] = (Date.now() - t0) / 1000;
    const verified = await vm.waitFor(new RegExp(`bronze preinit: /rootfs\\.sqsh verified \\(dm-verity, \\d+ blocks, root hash ${roothash}, read in \\d+ ms\\)`), BOOT, a);
    // What verifying costs at boot: the one full read of the verity device (hashing every block).
    times['verity read of the whole root (s)'] = Number(/read in (\d+) ms/.exec(vm.lines[verified]!)![1]) / 1000;
    await vm.waitFor(new RegExp(`machined\\[1\\]: rootfs: /dev/dm-\\d+ \\(squashfs\\) verified by dm-verity \\(bronze-root, sha256, root hash ${roothash}\\)`), BOOT, a);
    await vm.waitFor(/machined\[1\]: maintenance mode: no machine configuration/, BOOT, a);
    times['tampered slot B to maintenance on A'] = (Date.now() - t0) / 1000;

    // What the node says, from the kernel's device-mapper table and status.
    const r = await bronzectlUntilOk(['get', 'rootfs', '--insecure', '-n', target, '-o', 'json'], { timeoutMs: 180_000 });
    expect(r.code, r.stderr).toBe(0);
    const rootfs = JSON.parse(r.stdout);
    expect(rootfs.metadata).toMatchObject({ namespace: 'runtime', type: 'RootfsStatuses.runtime.bronze.dev', id: 'rootfs' });
    expect(rootfs.spec).toEqual({
      device: expect.stringMatching(/^\/dev\/dm-\d+$/), filesystemType: 'squashfs', verified: true, mapperName: 'bronze-root',
      rootHash: roothash, expectedRootHash: roothash, hashAlgorithm: 'sha256', dataBlockSize: 4096, dataBlocks: expect.any(Number), status: 'verified',
    });
    // The tree covers the whole squashfs: its blocks are the file's up to the verity superblock.
    const sqsh = fs.statSync(`${OUT}/rootfs.sqsh`).size;
    expect(rootfs.spec.dataBlocks * 4096).toBeLessThan(sqsh);
    expect(sqsh - rootfs.spec.dataBlocks * 4096, 'hash tree and superblock').toBeLessThan(sqsh / 50);
    const table = await bronzectl(['get', 'rootfs', '--insecure', '-n', target]);
    expect(table.stdout).toMatch(new RegExp(`rootfs\\s+\\d+\\s+/dev/dm-\\d+\\s+true\\s+${escape(roothash)}`));
    // SecurityState as Talos has it: SeaBIOS, so no Secure Boot and no UKI.
    const ss = await bronzectl(['get', 'securitystate', '--insecure', '-n', target, '-o', 'json']);
    expect(ss.code, ss.stderr).toBe(0);
    expect(JSON.parse(ss.stdout).spec).toMatchObject({ secureBoot: false, bootedWithUKI: false });
    // Why B did not come up, where an operator looks: the failed upgrade and the slot.
    const bs = await bronzectl(['get', 'bootstatus', '--insecure', '-n', target, '-o', 'json']);
    expect(bs.code, bs.stderr).toBe(0);
    const boot = JSON.parse(bs.stdout).spec;
    const why = new RegExp(`^the root filesystem does not match the root hash it was booted with: data block ${tampered.block} \\(byte ${tampered.block * 4096}\\) of /rootfs\\.sqsh failed to read \\(Input/output error\\); expected root hash ${roothash}\\. Refusing to boot\\.$`);
    expect(boot).toMatchObject({ installed: true, booted: 'A', upgrade: { state: 'failed', from: 'A', to: 'B', version: 'v0.0.0-tampered', error: expect.stringMatching(why) }, slots: { B: { present: true, failure: expect.stringMatching(why) } } });
    expect(boot.last).toBe('upgrade A->B (v0.0.0-tampered) failed');
    await vm.waitFor(/machined\[1\]: .*upgrade to v0\.0\.0-tampered \(slot B\) failed: GRUB fell back to slot A: the root filesystem does not match/, 60_000, a);
    // GRUB spent the try: the next boot is slot A without trying B.
    expect(vm.lines.slice(a).some((l) => /trying slot B/.test(l))).toBe(false);
  }, 3 * BOOT);
});
