// End-to-end: the boot media `make image` builds, booted under QEMU/TCG one at a time.
//   - bronze.iso with BIOS (SeaBIOS) and UEFI (OVMF): GRUB's menu, the kernel, maintenance mode.
//   - disk.raw with BIOS and UEFI: GRUB picks slot A from grubenv, machined mounts STATE and
//     EPHEMERAL; and a boot-once try of an empty slot B that falls back to A, GRUB counting
//     the try down in grubenv.
//   - PXE: QEMU's iPXE ROM fetches a chain script over TFTP which sets bronze-config and
//     chains boot.ipxe; the node fetches its configuration over HTTP from the host.
// The disk boots write to a temporary overlay (or a copy), never to the artifact.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QemuVM, type QemuOptions } from '../../image-builder/qemu.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { consoleFile } from '../lib/console-log.ts';
import { serveFiles, type FileServer } from '../lib/http-files.ts';
import { freePort } from '../lib/ports.ts';

const OUT = '_out/amd64';
const ISO = `${OUT}/bronze.iso`;
const DISK = `${OUT}/disk.raw`;
const PXE = `${OUT}/pxe`;
const BOOT = 240_000;

// A boot medium's part ends once machined runs from the verified root with the medium's command
// line and configuration: the services that follow are the same userspace on every medium, and
// boot.test.ts (and every test that drives a node) waits for them. Waiting for them here too
// cost ~25 s of TCG per boot, five boots a run.
/** Every boot path: preinit verified the root with the image's root hash, and machined read it back from the kernel. */
const ROOTHASH = fs.existsSync(`${OUT}/roothash`) ? fs.readFileSync(`${OUT}/roothash`, 'utf8').trim() : '';
async function verifiedRoot(vm: QemuVM): Promise<void> {
  await vm.waitFor(new RegExp(`bronze preinit: /rootfs\\.sqsh verified \\(dm-verity, \\d+ blocks, root hash ${ROOTHASH}, read in \\d+ ms\\)`), BOOT);
  await vm.waitFor(new RegExp(`machined\\[1\\]: rootfs: /dev/dm-\\d+ \\(squashfs\\) verified by dm-verity \\(bronze-root, sha256, root hash ${ROOTHASH}\\)`), BOOT);
}

async function withVM<T>(name: string, opts: QemuOptions, fn: (vm: QemuVM) => Promise<T>): Promise<T> {
  const vm = new QemuVM({ apiPort: await freePort(), noReboot: true, ...opts }, consoleFile(`images-${name}`)).start();
  const t0 = Date.now();
  try {
    return await fn(vm);
  } finally {
    vm.kill();
    await vm.waitExit(10_000).catch(() => {});
    console.log(`images: ${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
}

/** GRUB's environment block on BOOT (partition 3), read without mounting. */
function grubenv(image: string): Record<string, string> {
  const text = execFileSync('grub-fstest', [image, 'cat', '(loop0,gpt3)/grub/grubenv'], { encoding: 'utf8' });
  return Object.fromEntries(text.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

/** Runs `fn` with BOOT (partition 3) of a disk image mounted, through a loop device at its offset. */
function withBootMounted(image: string, fn: (dir: string) => void): void {
  const info = execFileSync('sgdisk', ['--info=3', image], { encoding: 'utf8' });
  const first = Number(/First sector: (\d+)/.exec(info)![1]);
  const last = Number(/Last sector: (\d+)/.exec(info)![1]);
  const loop = execFileSync('losetup', ['--find', '--show', '--offset', String(first * 512), '--sizelimit', String((last - first + 1) * 512), image], { encoding: 'utf8' }).trim();
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

describe('boot media', () => {
  beforeAll(() => {
    for (const f of [ISO, DISK, `${PXE}/boot.ipxe`]) if (!fs.existsSync(f)) throw new Error(`${f} is missing: run \`make image\` first`);
  });

  it('disk.raw: GPT partitions by name, sparse, GRUB for BIOS and UEFI, slot A in grubenv', () => {
    const table = execFileSync('sgdisk', ['--print', DISK], { encoding: 'utf8' });
    const rows = table.split('\n').filter((l) => /^\s+\d+\s/.test(l)).map((l) => l.trim().split(/\s+/));
    expect(rows.map((r) => [r[0], r.at(-2), r.at(-1)])).toEqual([
      ['1', 'EF00', 'EFI'],
      ['2', 'EF02', 'BIOS'],
      ['3', '8300', 'BOOT'],
      ['4', '8300', 'META'],
      ['5', '8300', 'STATE'],
      ['6', '8300', 'EPHEMERAL'],
    ]);
    expect(fs.statSync(DISK).size).toBe(2 * 1024 ** 3);
    expect(fs.statSync(DISK).blocks * 512, 'sparse').toBeLessThan(400 * 1024 ** 2);
    const ls = (p: string) => execFileSync('grub-fstest', [DISK, 'ls', p], { encoding: 'utf8' }).trim().split(/\s+/).sort();
    expect(ls('(loop0,gpt3)/')).toEqual(['A/', 'B/', 'grub/']);
    expect(ls('(loop0,gpt3)/A/')).toEqual(['initramfs.xz', 'roothash.env', 'vmlinuz']);
    expect(ls('(loop0,gpt3)/B/')).toEqual(['']);
    expect(ls('(loop0,gpt3)/grub/')).toEqual(['grub.cfg', 'grubenv', 'i386-pc/', 'x86_64-efi/']);
    // FAT is case-insensitive; GRUB lists a plain 8.3 name in lower case.
    expect(ls('(loop0,gpt1)/EFI/BOOT/').map((n) => n.toUpperCase())).toEqual(['BOOTX64.EFI']);
    expect(grubenv(DISK)).toEqual({ saved_entry: 'A' });
  });

  it('bronze.iso: BIOS and UEFI boot images, and the same bytes when rebuilt from the same inputs', () => {
    const report = execFileSync('xorriso', ['-indev', ISO, '-report_el_torito', 'plain'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    expect(report).toMatch(/El Torito boot img :\s+1\s+BIOS/);
    expect(report).toMatch(/El Torito boot img :\s+2\s+UEFI/);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-iso-'));
    try {
      const sums = ['a', 'b'].map((n) => {
        fs.mkdirSync(path.join(tmp, n));
        execFileSync('image-builder/iso.sh', ['amd64', OUT, path.join(tmp, n, 'bronze.iso')], { stdio: 'pipe' });
        return execFileSync('sha256sum', [path.join(tmp, n, 'bronze.iso')], { encoding: 'utf8' }).split(' ')[0];
      });
      expect(sums[0]).toBe(sums[1]);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }, 60_000);

  it('bronze.iso boots with BIOS and with UEFI into maintenance mode', async () => {
    for (const firmware of ['bios', 'uefi'] as const) {
      await withVM(`iso-${firmware}`, { boot: { kind: 'iso', path: ISO }, firmware }, async (vm) => {
        await vm.waitFor(/GNU GRUB/, 120_000);
        await vm.waitFor(/bronze: loading the kernel and initramfs/, 60_000);
        await vm.waitFor(/Command line: BOOT_IMAGE=\/boot\/vmlinuz console=/, 60_000);
        await vm.waitFor(/machined\[1\]: maintenance mode: no machine configuration/, BOOT);
        await verifiedRoot(vm);
      });
    }
  }, 2 * BOOT);

  it('disk.raw boots with BIOS and with UEFI: GRUB picks slot A, STATE and EPHEMERAL are mounted', async () => {
    for (const firmware of ['bios', 'uefi'] as const) {
      await withVM(`disk-${firmware}`, { boot: { kind: 'disk', path: DISK, snapshot: true }, firmware }, async (vm) => {
        await vm.waitFor(/bronze: booting slot A/, 120_000);
        await vm.waitFor(/Command line: BOOT_IMAGE=\/A\/vmlinuz .* bronze\.slot=A/, 60_000);
        await vm.waitFor(/machined\[1\]: mounted STATE \(\/dev\/vda5\) at \/system\/state/, BOOT);
        await vm.waitFor(/machined\[1\]: mounted EPHEMERAL \(\/dev\/vda6\) at \/var/, 60_000);
        await verifiedRoot(vm);
      });
    }
  }, 2 * BOOT);

  describe('a tried slot', () => {
    let dir: string;
    let copy: string;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-slots-'));
      copy = path.join(dir, 'disk.raw');
      execFileSync('cp', ['--sparse=always', DISK, copy]);
    });
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('that does not load falls back to slot A, and GRUB counts its tries down in grubenv', async () => {
      withBootMounted(copy, (boot) => execFileSync('grub-editenv', [path.join(boot, 'grub/grubenv'), 'set', 'next_entry=B', 'next_tries=2']));
      expect(grubenv(copy)).toEqual({ saved_entry: 'A', next_entry: 'B', next_tries: '2' });
      // Two boots, each stopped once the kernel has its command line: GRUB tries the empty
      // slot B, falls back to A, and saves the count; the second try is the last.
      for (const [i, left] of [{ next_entry: 'B', next_tries: '1' }, { next_entry: '', next_tries: '' }].entries()) {
        await withVM(`slot-try-${i + 1}`, { boot: { kind: 'disk', path: copy } }, async (vm) => {
          await vm.waitFor(/bronze: trying slot B, fallback slot A/, 120_000);
          await vm.waitFor(/bronze: slot B holds no kernel and initramfs/, 30_000);
          await vm.waitFor(/Falling back to `Bronze \(slot A\)'/, 30_000);
          await vm.waitFor(/Command line: BOOT_IMAGE=\/A\/vmlinuz .* bronze\.slot=A/, 60_000);
        });
        expect(grubenv(copy)).toEqual({ saved_entry: 'A', ...left });
      }
      // No tries left: slot A as usual, without trying.
      await withVM('slot-after-tries', { boot: { kind: 'disk', path: copy } }, async (vm) => {
        const a = await vm.waitFor(/bronze: booting slot A/, 120_000);
        expect(vm.lines.slice(0, a).some((l) => /trying slot/.test(l))).toBe(false);
      });
    }, 3 * 120_000);
  });

  describe('PXE', () => {
    let files: FileServer;
    let tftp: string;
    beforeAll(async () => {
      const secrets = await generateSecrets();
      const cfg = generateConfigs({ clusterName: 'pxe', endpoint: 'https://10.0.2.15:6443', secrets });
      files = await serveFiles({ '/controlplane.yaml': cfg.controlplane });
      // The TFTP root: the PXE assets as built, and the chain script a site would add.
      tftp = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-tftp-'));
      for (const f of fs.readdirSync(PXE)) fs.symlinkSync(path.resolve(PXE, f), path.join(tftp, f));
      fs.writeFileSync(path.join(tftp, 'site.ipxe'), `#!ipxe\nset bronze-config http://10.0.2.2:${files.port}/controlplane.yaml\nchain boot.ipxe\n`);
    });
    afterAll(async () => {
      await files?.close();
      if (tftp) fs.rmSync(tftp, { recursive: true, force: true });
    });

    it('boots over TFTP with its configuration from the URL in bronze-config', async () => {
      await withVM('pxe', { boot: { kind: 'pxe', tftpDir: tftp, bootfile: 'site.ipxe' } }, async (vm) => {
        await vm.waitFor(/Command line: initrd=initramfs\.xz console=.* ip=dhcp bronze\.config=http:\/\/10\.0\.2\.2:\d+\/controlplane\.yaml/, 120_000);
        await vm.waitFor(/machined\[1\]: configuration from http:\/\/10\.0\.2\.2:\d+\/controlplane\.yaml: controlplane of cluster pxe/, BOOT);
        await verifiedRoot(vm);
      });
      expect(files.requests).toContain('/controlplane.yaml');
    }, BOOT + 60_000);
  });
});
