// End-to-end on arm64: the arm64 image (`make image ARCH=arm64`) under qemu-system-aarch64
// -M virt -cpu max (TCG). aarch64 under TCG is slow, so `make test` keeps this small: two VMs,
// each reused for every step it can serve, and each step's time printed.
//   1. A direct-kernel boot (no firmware: QEMU loads the kernel and gives it a device tree):
//      machined as PID 1 on aarch64, the six services Running, the maintenance API answering;
//      the power button (gpio-keys) shuts it down in order.
//   2. disk.raw booted with UEFI (AAVMF): GRUB arm64-efi picks slot A, the maintenance API
//      answers; `apply-config --insecure`, then over mTLS `bronzectl version` (the node names
//      its arch) and `get addresses`; every role's V8 code cache accepted (made by the arm64
//      runtime at build time); the node refuses the amd64 upgrade image before writing
//      anything, then upgrades to a second arm64 build (slot B), Running and committed on it;
//      there (EPHEMERAL on the disk, /var, made afresh by the upgrade) the container of issue 45:
//      a busybox image for arm64 only (Debian's busybox-static:arm64, unpacked by
//      scripts/deps.sh) through `image import`, a ContainerConfig applied without a reboot,
//      running under containerd and runc on aarch64, its log naming the machine (`uname -m`).
// Before them, without a VM: the arm64 artifacts (an aarch64 rootfs without a shell, the signed
// checksums of both arches, bronzectl for arm64 hosts run under qemu-user).
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QemuVM } from '../../image-builder/qemu.ts';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { SERVICE_GRAPH } from '../../src/machined/services.ts';
import { bronzectl, bronzectlUntilOk, until } from '../lib/bronzectl.ts';
import { consoleFile } from '../lib/console-log.ts';
import { freePort } from '../lib/ports.ts';
import { buildBusyboxImage, writeOciArchive } from '../fixtures/busybox-image.ts';

const OUT = '_out/arm64';
const DISK = `${OUT}/disk.raw`;
const NEXT = '_out/test-images/arm64/next/upgrade.tar';
const AMD64_UPGRADE = '_out/amd64/upgrade.tar';
const BOOT = 600_000;
const DAEMONS = SERVICE_GRAPH.map((s) => s.id);
const running = /machined\[1\]: all 6 services Running/;
const maintenance = /machined\[1\]: maintenance mode: no machine configuration/;
const rejectedCache = /code cache was rejected/;
/** Debian's arm64 busybox-static, unpacked by scripts/deps.sh where image-builder/arch.sh finds the rootfs's arm64 programs. */
const BUSYBOX_ARM64 = path.join(process.env.BRONZE_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'bronze'), 'busybox-static-arm64/bin/busybox');
const CONTAINER_IMAGE = 'bronze.test/busybox-arm64:1';

const times: Record<string, number> = {};
const timed = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
  const t0 = Date.now();
  try {
    return await fn();
  } finally {
    times[name] = (Date.now() - t0) / 1000;
    console.log(`arm64: ${name}: ${times[name]!.toFixed(1)} s`);
  }
};

/** An ELF file's class and machine from its first 20 bytes (a file name: read them), e.g. `ELF64 aarch64` (EM_AARCH64 = 183). */
function elfMachine(file: string | Buffer): string {
  let h: Buffer = Buffer.alloc(20);
  if (typeof file === 'string') {
    const fd = fs.openSync(file, 'r');
    try {
      fs.readSync(fd, h, 0, 20, 0);
    } finally {
      fs.closeSync(fd);
    }
  } else h = file;
  if (h.length < 20 || h.readUInt32BE(0) !== 0x7f454c46) return 'not ELF';
  const machine = h.readUInt16LE(18);
  return `ELF${h[4] === 2 ? 64 : 32} ${({ 183: 'aarch64', 62: 'x86_64' } as Record<number, string>)[machine] ?? `machine ${machine}`}`;
}

/** A controlplane configuration for a node reached at 127.0.0.1:<port>, and an admin client config for it. */
async function clusterFor(dir: string, name: string, port: number): Promise<{ machineConfig: string; clientConfig: string }> {
  const secrets = await generateSecrets();
  const cfg = generateConfigs({ clusterName: name, endpoint: 'https://10.0.2.15:6443', additionalSANs: ['127.0.0.1'], secrets });
  const machineConfig = path.join(dir, `${name}.yaml`);
  fs.writeFileSync(machineConfig, cfg.controlplane);
  const clientConfig = path.join(dir, `${name}.bronzeconfig`);
  await save(clientConfig, await newClientConfig({ contextName: name, endpoints: [`127.0.0.1:${port}`], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
  return { machineConfig, clientConfig };
}

describe('arm64 artifacts', () => {
  it('rootfs.sqsh: the aarch64 binary and libraries, no shell or coreutils', () => {
    const text = execFileSync('rdsquashfs', ['-d', `${OUT}/rootfs.sqsh`], { encoding: 'utf8', maxBuffer: 16 << 20 });
    const files = text.split('\n').filter(Boolean).map((l) => '/' + l.split(' ')[1]!);
    for (const f of ['/sbin/init', '/sbin/apid', '/lib/ld-linux-aarch64.so.1', '/lib/aarch64-linux-gnu/libc.so.6', '/lib/aarch64-linux-gnu/libstdc++.so.6', '/usr/sbin/mkfs.xfs', '/usr/sbin/xfs_repair'])
      expect(files, f).toContain(f);
    expect(files.filter((f) => /x86_64|ld-linux-x86-64/.test(f)), 'nothing of amd64').toEqual([]);
    const forbidden = /^(sh|bash|dash|ash|busybox|toybox|ls|cat|cp|mv|rm|mkdir|echo|env|chmod|chown|ln|coreutils|login|su|sudo|ssh|sshd)$/;
    expect(files.filter((f) => forbidden.test(path.posix.basename(f)))).toEqual([]);
    // The ELF header of each program in the image (rdsquashfs -c writes a file to stdout).
    for (const f of ['/sbin/init', '/usr/sbin/mkfs.xfs', '/usr/sbin/xfs_repair']) {
      const head = execFileSync('bash', ['-c', 'rdsquashfs -c "$1" "$2" | head -c 20', '_', f, `${OUT}/rootfs.sqsh`]);
      expect(elfMachine(head), f).toBe('ELF64 aarch64');
    }
  });

  // Asynchronously, as in rootfs.test.ts: a worker blocked for a minute misses vitest's RPC deadline.
  it('SHA256SUMS covers both arches and its signature verifies', async () => {
    await promisify(execFile)('image-builder/verify.sh', ['_out'], { maxBuffer: 64 << 20 });
    const sums = fs.readFileSync('_out/SHA256SUMS', 'utf8');
    for (const f of ['amd64/vmlinuz', 'amd64/upgrade.tar', 'arm64/vmlinuz', 'arm64/initramfs.xz', 'arm64/bronze.iso', 'arm64/disk.raw', 'arm64/pxe/boot.ipxe', 'arm64/upgrade.tar', 'arm64/bronzectl', 'arm64/kspp-report.txt'])
      expect(sums, f).toMatch(new RegExp(`  ${f.replace(/\./g, '\\.')}$`, 'm'));
  });

  it('bronzectl for arm64 hosts is an aarch64 single executable that names its arch', () => {
    expect(elfMachine(`${OUT}/bronzectl`)).toBe('ELF64 aarch64');
    // Without Node on the PATH: it needs none.
    const qemuUser = execFileSync('bash', ['-c', 'command -v qemu-aarch64'], { encoding: 'utf8' }).trim();
    const out = execFileSync(qemuUser, [`${OUT}/bronzectl`, 'version', '--client'], { encoding: 'utf8', env: { PATH: '/nonexistent', HOME: os.tmpdir() } });
    expect(out).toMatch(/OS\/Arch:\s+linux\/arm64/);
  });
});

describe('arm64 under qemu-system-aarch64 -M virt -cpu max', () => {
  let dir: string;
  let vm: QemuVM | undefined;

  beforeAll(() => {
    for (const f of [`${OUT}/vmlinuz`, `${OUT}/initramfs.xz`, DISK, NEXT, AMD64_UPGRADE]) {
      if (!fs.existsSync(f)) throw new Error(`${f} is missing: run \`make test-images ARCH=arm64\` and \`make image\` first`);
    }
    if (!fs.existsSync(BUSYBOX_ARM64)) throw new Error(`${BUSYBOX_ARM64} is missing: run scripts/deps.sh first`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-arm64-'));
  });

  afterAll(() => {
    vm?.kill();
    console.log(`arm64: times ${JSON.stringify(times)}`);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('direct-kernel boot: PID 1 on aarch64, six services Running, the maintenance API, the power button', async () => {
    const port = await freePort();
    const target = `127.0.0.1:${port}`;
    vm = new QemuVM({ arch: 'arm64', apiPort: port, noReboot: true }, consoleFile('arm64-kernel')).start();

    await timed('kernel boot to the maintenance API', async () => {
      await vm!.waitFor(/Booting Linux on physical CPU/, 120_000);
      await vm!.waitFor(/Machine model: linux,dummy-virt/, 60_000);
      await vm!.waitFor(/machined\[1\]: machined v\S+ \(\S+\) starting as PID 1 /, BOOT);
      const r = await bronzectlUntilOk(['get', 'resourcedefinitions', '--insecure', '-n', target], { timeoutMs: BOOT });
      expect(r.code, r.stderr).toBe(0);
    });
    await timed('kernel boot to all 6 services Running', async () => {
      for (const d of DAEMONS) await vm!.waitFor(new RegExp(`machined\\[1\\]: service ${d}: Running: Health check successful`), BOOT);
      await vm!.waitFor(running, BOOT);
    });
    expect(vm.lines.some((l) => maintenance.test(l))).toBe(true);
    // machined's own code cache (the daemons' are checked in their logs on the disk boot).
    expect(vm.lines.filter((l) => rejectedCache.test(l))).toEqual([]);

    // The power button (QEMU's system_powerdown: gpio-keys on the device tree).
    await timed('power button to power off', async () => {
      const from = vm!.lines.length;
      await vm!.monitorCommand('system_powerdown');
      await vm!.waitFor(/machined\[1\]: power button pressed/, 60_000, from);
      await vm!.waitFor(/machined\[1\]: all services stopped/, 120_000, from);
      await vm!.waitFor(/reboot: Power down/, 120_000, from);
      expect(await vm!.waitExit(60_000)).toBe(0);
    });
  }, 2 * BOOT);

  it('disk.raw with UEFI: maintenance API; refuses the amd64 upgrade image, then upgrades to another arm64 build; a container runs there', async () => {
    const port = await freePort();
    const target = `127.0.0.1:${port}`;
    const { machineConfig, clientConfig } = await clusterFor(dir, 'armdisk', port);
    const ctl = (args: string[], timeoutMs = 120_000) => bronzectl(args, { config: clientConfig, timeoutMs });
    const bootStatus = async () => {
      const r = await ctl(['get', 'bootstatus', '-o', 'json']);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout).spec as { booted: string; default: string; next: string; version: string; slots: Record<string, { version: string }>; upgrade?: { state: string } };
    };
    // Writes go to a temporary overlay that lives as long as this QEMU (reboots included).
    vm = new QemuVM({ arch: 'arm64', apiPort: port, boot: { kind: 'disk', path: DISK, snapshot: true } }, consoleFile('arm64-disk')).start();

    await timed('UEFI disk boot to the maintenance API', async () => {
      await vm!.waitFor(/bronze: booting slot A/, 300_000);
      await vm!.waitFor(/Kernel command line: BOOT_IMAGE=\/A\/vmlinuz .* bronze\.slot=A/, 120_000);
      await vm!.waitFor(/machined\[1\]: mounted STATE \(\/dev\/vda5\) at \/system\/state/, BOOT);
      await vm!.waitFor(maintenance, BOOT);
      const r = await bronzectlUntilOk(['get', 'resourcedefinitions', '--insecure', '-n', target], { timeoutMs: 300_000 });
      expect(r.code, r.stderr).toBe(0);
    });
    // UEFI on virt: ACPI, not the device tree.
    expect(vm.lines.some((l) => /ACPI: /.test(l))).toBe(true);

    let version = '';
    await timed('apply-config --insecure to version over mTLS', async () => {
      const applied = await bronzectl(['apply-config', '--insecure', '-n', target, '-f', machineConfig]);
      expect(applied.code, applied.stderr).toBe(0);
      const v = await bronzectlUntilOk(['version'], { config: clientConfig, timeoutMs: 300_000 });
      expect(v.code, v.stderr).toBe(0);
      // The client runs here (amd64); the server names the node's arch.
      expect(v.stdout).toMatch(/Server:[\s\S]*OS\/Arch:\s+linux\/arm64/);
      version = /Server:[\s\S]*?Tag:\s+(v\d+\.\d+\.\d+\S*)/.exec(v.stdout)![1]!;
    });
    await vm.waitFor(running, BOOT);

    // networkd publishes the DHCP lease from QEMU's user network.
    let a = await ctl(['get', 'addresses']);
    for (const until = Date.now() + 60_000; !/10\.0\.2\.15\/24/.test(a.stdout) && Date.now() < until; a = await ctl(['get', 'addresses'])) {
      await new Promise((r) => setTimeout(r, 2000));
    }
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toMatch(/10\.0\.2\.15\/24/);
    expect(a.stdout).toMatch(/127\.0\.0\.1\/8/);

    // Every role compiled from the code cache made for it at build time (V8 refuses a cache of
    // another architecture, and the binary says so): machined on the console, the daemons in their logs.
    expect(vm.lines.filter((l) => rejectedCache.test(l))).toEqual([]);
    for (const d of DAEMONS) {
      const logs = await ctl(['logs', d]);
      expect(logs.code, logs.stderr).toBe(0);
      expect(logs.stdout.split('\n').filter((l) => rejectedCache.test(l)), d).toEqual([]);
    }
    const before = await bootStatus();
    expect(before).toMatchObject({ booted: 'A', default: 'A' });

    await timed('amd64 image refused', async () => {
      const from = vm!.lines.length;
      const r = await ctl(['upgrade', '--image', AMD64_UPGRADE], 300_000);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/nothing was written/);
      expect(r.stderr).toMatch(/wrong architecture: the image is for amd64, this node is arm64/);
      expect(await bootStatus()).toEqual(before);
      expect(vm!.lines.slice(from).some((l) => /machined\[1\]: rebooting/.test(l))).toBe(false);
    });

    await timed('upgrade to the next arm64 build (upload to Running on slot B)', async () => {
      const from = vm!.lines.length;
      const r = await ctl(['upgrade', '--image', NEXT], 600_000);
      expect(r.code, r.stderr).toBe(0);
      const reboot = await vm!.waitFor(/machined\[1\]: rebooting/, BOOT, from);
      const booting = await vm!.waitFor(/bronze: trying slot B/, BOOT, reboot);
      await vm!.waitFor(/Kernel command line: BOOT_IMAGE=\/B\/vmlinuz .* bronze\.slot=B/, 120_000, booting);
      await vm!.waitFor(running, BOOT, booting);
    });
    const after = await bronzectlUntilOk(['version'], { config: clientConfig, timeoutMs: 300_000 });
    expect(/Server:[\s\S]*?Tag:\s+(\S+)/.exec(after.stdout)?.[1]).toBe(`${version}-next`);
    let st = await bootStatus();
    for (const until = Date.now() + 120_000; st.default !== 'B' && Date.now() < until; st = await bootStatus()) await new Promise((r) => setTimeout(r, 2000));
    expect(st).toMatchObject({ booted: 'B', default: 'B', next: '', upgrade: { state: 'committed' } });

    // The container of workloads.test.ts's `image import` step, on aarch64. After the upgrade, not
    // before it: the upgrade (without --preserve) wipes EPHEMERAL, and with it the image, so a
    // container declared before it would keep the new slot from being committed.
    await timed('image import to a container running on aarch64', async () => {
      const archive = path.join(dir, 'busybox-arm64.tar');
      const img = await buildBusyboxImage({ binaries: { arm64: BUSYBOX_ARM64 }, applets: ['sh', 'echo', 'sleep', 'uname'] });
      await writeOciArchive(img, archive, CONTAINER_IMAGE);
      const imp = await ctl(['image', 'import', archive], 300_000);
      expect(imp.code, imp.stderr).toBe(0);
      const doc = stringify({
        apiVersion: 'v1alpha1',
        kind: 'ContainerConfig',
        name: 'armbox',
        image: CONTAINER_IMAGE,
        entrypoint: ['/bin/sh', '-c', 'echo arm64 container $(uname -m); trap "exit 0" TERM; sleep 100000 & wait'],
      });
      const file = path.join(dir, 'armdisk-container.yaml');
      fs.writeFileSync(file, `${fs.readFileSync(machineConfig, 'utf8').replace(/\n*$/, '\n')}---\n${doc}`);
      const applied = await ctl(['apply-config', '-f', file]);
      expect(applied.code, applied.stderr).toBe(0);
      await until('container armbox running', () => ctl(['get', 'containerstatus', 'armbox', '-o', 'json']), (x) => x.code === 0 && JSON.parse(x.stdout).spec.phase === 'running', 240_000);
      const logs = await until('armbox logs', () => ctl(['logs', 'armbox', '--namespace', 'taloscontainers']), (x) => /arm64 container aarch64/.test(x.stdout), 60_000);
      // Each line is stamped with its node, as talosctl prints a container's log.
      expect(logs.stdout).toMatch(/^\S+: arm64 container aarch64$/m);
    });
  }, 4 * BOOT + 300_000);
});
