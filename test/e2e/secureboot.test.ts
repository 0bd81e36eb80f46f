// End-to-end: Secure Boot (amd64 UEFI) under QEMU/TCG, OVMF built with Secure Boot (SMM on),
// starting from OVMF's empty variable store: setup mode, no keys.
//   1. The Secure Boot EFI system partition (_out/amd64/secureboot/esp.img: signed systemd-boot,
//      the signed UKI, Bronze's PK/KEK/db to enroll): systemd-boot enrolls the keys by itself
//      and resets; the firmware then enforces Secure Boot and boots systemd-boot and the UKI;
//      the kernel says Secure Boot is on, the root is verified, and SecurityState says
//      secureBoot and bootedWithUKI (bronzectl in maintenance mode, --insecure).
//   2. With those keys enrolled, the same UKI signed by another key is refused by the firmware.
//   3. secureboot/disk.raw (disk.raw with a Secure Boot ESP: systemd-boot, slot A's UKI as
//      bronze-a.efi), from an empty variable store again: it enrolls, boots slot A's UKI with
//      Secure Boot enforced, takes a configuration; `bronzectl upgrade` with the Secure Boot
//      image of another build (next/secureboot-upgrade.tar) writes slot B's signed UKI to the
//      ESP and boots it once through LoaderEntryOneShot; the node comes back Running on slot B
//      under Secure Boot, committed: the default entry is bronze-b.efi. Then an upgrade to slot
//      A whose UKI is validly signed but whose root is tampered (one byte of rootfs.sqsh; the
//      root hash on its signed command line is the good one): preinit refuses it and records
//      why for slot A (named by systemd-boot's LoaderEntrySelected), the kernel panics,
//      systemd-boot boots the default (slot B) again, and the upgrade is recorded as failed
//      with preinit's reason.
//   4. secureboot/bronze.iso (its El Torito EFI image is that ESP) with a blank disk, from an
//      empty variable store: it enrolls, boots the UKI under Secure Boot, and apply-config with
//      machine.install.disk installs signed systemd-boot and the UKI onto the disk's ESP (not
//      GRUB); the disk alone then boots slot A under Secure Boot, Running.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QemuVM } from '../../image-builder/qemu.ts';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { bronzectl, bronzectlUntilOk } from '../lib/bronzectl.ts';
import { tamperedInitramfs } from '../lib/tamper.ts';
import { consoleFile } from '../lib/console-log.ts';
import { freePort } from '../lib/ports.ts';

const OUT = '_out/amd64';
const ESP = `${OUT}/secureboot/esp.img`;
const UKI = `${OUT}/secureboot/bronze.efi`;
const SB_DISK = `${OUT}/secureboot/disk.raw`;
const SB_NEXT = '_out/test-images/amd64/next/secureboot-upgrade.tar';
const SB_ISO = `${OUT}/secureboot/bronze.iso`;
const BOOT = 300_000;

describe('Secure Boot', () => {
  let dir: string;
  let vars: string;
  let vm: QemuVM | undefined;
  const times: Record<string, number> = {};

  beforeAll(() => {
    for (const f of [ESP, UKI, SB_DISK, SB_NEXT, SB_ISO, `${OUT}/roothash`]) if (!fs.existsSync(f)) throw new Error(`${f} is missing: run \`make image\` first`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-secureboot-'));
    vars = path.join(dir, 'OVMF_VARS.fd');
    fs.copyFileSync('/usr/share/OVMF/OVMF_VARS_4M.fd', vars);
  });

  afterAll(() => {
    vm?.kill();
    console.log(`secureboot: times ${JSON.stringify(times)}`);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * What a node of its own needs: an empty variable store (setup mode), a control-plane
   * configuration installing to /dev/vda, a free API port, and a client context for it.
   */
  const freshNode = async (name: string) => {
    const vars = path.join(dir, `OVMF_VARS-${name}.fd`);
    fs.copyFileSync('/usr/share/OVMF/OVMF_VARS_4M.fd', vars);
    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: name, endpoint: 'https://10.0.2.15:6443', additionalSANs: ['127.0.0.1'], secrets, installDisk: '/dev/vda' });
    const configFile = path.join(dir, `${name}.yaml`);
    fs.writeFileSync(configFile, cfg.controlplane);
    const port = await freePort();
    const target = `127.0.0.1:${port}`;
    const config = path.join(dir, `bronzeconfig-${name}`);
    await save(config, await newClientConfig({ contextName: name, endpoints: [target], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
    const ctl = (args: string[], timeoutMs = 120_000) => bronzectl(args, { config, timeoutMs });
    return { vars, port, target, configFile, ctl };
  };

  it('enrolls Bronze\'s keys from setup mode, then boots the signed UKI with Secure Boot enforced', async () => {
    const roothash = fs.readFileSync(`${OUT}/roothash`, 'utf8').trim();
    const port = await freePort();
    const t0 = Date.now();
    vm = new QemuVM({ apiPort: port, firmware: 'uefi-secureboot', ovmfVars: vars, boot: { kind: 'disk', path: ESP, snapshot: true } }, consoleFile('secureboot-enroll')).start();
    await vm.waitFor(/[Ee]nroll/, BOOT);
    const linux = await vm.waitFor(/Linux version \d/, BOOT);
    times['to the kernel'] = (Date.now() - t0) / 1000;
    await vm.waitFor(/[Ss]ecure boot enabled/, 60_000, linux);
    await vm.waitFor(new RegExp(`Command line: .*bronze\\.roothash=${roothash}`), 60_000, linux);
    await vm.waitFor(new RegExp(`bronze preinit: /rootfs\\.sqsh verified \\(dm-verity, \\d+ blocks, root hash ${roothash}`), BOOT, linux);
    await vm.waitFor(/machined\[1\]: maintenance mode: no machine configuration/, BOOT, linux);
    times['to maintenance mode'] = (Date.now() - t0) / 1000;
    const r = await bronzectlUntilOk(['get', 'securitystate', '--insecure', '-n', `127.0.0.1:${port}`, '-o', 'json'], { timeoutMs: 180_000 });
    expect(r.code, r.stderr).toBe(0);
    // The UKI's signer, as Talos prints a fingerprint: the db certificate the build made.
    const fingerprint = /Fingerprint=([0-9A-F:]+)/.exec(execFileSync('openssl', ['x509', '-in', '_out/secureboot/db.crt', '-noout', '-fingerprint', '-sha256'], { encoding: 'utf8' }))![1];
    expect(JSON.parse(r.stdout).spec).toMatchObject({ secureBoot: true, bootedWithUKI: true, ukiSigningKeyFingerprint: fingerprint });
    vm.kill();
    await vm.waitExit(10_000);
  }, 2 * BOOT);

  it('refuses a UKI signed by another key', async () => {
    // The same UKI, its signature replaced by one from a key the firmware never saw.
    const other = path.join(dir, 'other');
    fs.mkdirSync(other);
    execFileSync('openssl', ['req', '-new', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '1', '-subj', '/CN=not Bronze/', '-keyout', `${other}/k.key`, '-out', `${other}/k.crt`], { stdio: 'pipe' });
    const unsigned = `${other}/unsigned.efi`;
    fs.copyFileSync(UKI, unsigned);
    execFileSync('sbattach', ['--remove', unsigned], { stdio: 'pipe' });
    execFileSync('sbsign', ['--key', `${other}/k.key`, '--cert', `${other}/k.crt`, '--output', `${other}/bronze.efi`, unsigned], { stdio: 'pipe' });
    const esp = path.join(dir, 'esp.img');
    fs.copyFileSync(ESP, esp);
    execFileSync('mcopy', ['-o', '-i', esp, `${other}/bronze.efi`, '::/EFI/Linux/bronze.efi'], { env: { ...process.env, MTOOLS_SKIP_CHECK: '1' }, stdio: 'pipe' });
    vm = new QemuVM({ apiPort: await freePort(), firmware: 'uefi-secureboot', ovmfVars: vars, boot: { kind: 'disk', path: esp }, noReboot: true }, consoleFile('secureboot-foreign')).start();
    await vm.waitFor(/[Ss]ecurity [Vv]iolation|Access Denied/, BOOT);
    expect(vm.lines.some((l) => /Linux version \d/.test(l)), 'the foreign UKI never ran').toBe(false);
    vm.kill();
    await vm.waitExit(10_000);
  }, BOOT + 60_000);
  it('disk.raw boots slot A\'s UKI under Secure Boot, and an upgrade boots slot B\'s signed UKI once, then commits it', async () => {
    const disk = path.join(dir, 'sb-disk.raw');
    execFileSync('cp', ['--sparse=always', SB_DISK, disk]);
    const { vars: diskVars, port, target, configFile, ctl } = await freshNode('sb');
    const json = async (what: string) => {
      const r = await ctl(['get', what, '-o', 'json']);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout).spec;
    };
    const running = /machined\[1\]: all 6 services Running/;

    const t0 = Date.now();
    vm = new QemuVM({ apiPort: port, firmware: 'uefi-secureboot', ovmfVars: diskVars, boot: { kind: 'disk', path: disk } }, consoleFile('secureboot-disk')).start();
    await vm.waitFor(/[Ee]nroll/, BOOT);
    const linux = await vm.waitFor(/Linux version \d/, BOOT);
    await vm.waitFor(/[Ss]ecure boot enabled/, 60_000, linux);
    await vm.waitFor(/machined\[1\]: mounted STATE \(\/dev\/vda5\) at \/system\/state/, BOOT, linux);
    await vm.waitFor(/machined\[1\]: maintenance mode: no machine configuration/, BOOT, linux);
    times['disk: to maintenance mode'] = (Date.now() - t0) / 1000;
    const applied = await bronzectlUntilOk(['apply-config', '--insecure', '-n', target, '-f', configFile], { timeoutMs: 180_000 });
    expect(applied.code, applied.stderr).toBe(0);
    await vm.waitFor(running, BOOT, linux);
    expect(await json('bootstatus')).toMatchObject({ installed: true, booted: 'A', default: 'A' });
    expect(await json('securitystate')).toMatchObject({ secureBoot: true, bootedWithUKI: true });

    // The image without a UKI is refused: UEFI would not boot what it wrote.
    const plain = await ctl(['upgrade', '--image', `${path.dirname(SB_NEXT)}/upgrade.tar`], 300_000);
    expect(plain.code).not.toBe(0);
    expect(plain.stderr).toMatch(/boots slot A through systemd-boot from a signed UKI \(bronze-a\.efi\).*carries none \(bronze\.efi\)/);

    const from = vm.lines.length;
    const t1 = Date.now();
    const up = await ctl(['upgrade', '--image', SB_NEXT, '--wait', '--timeout', '8m'], 600_000);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stderr).toMatch(/: upgraded to \S+-next \(slot B\)/);
    const armed = await vm.waitFor(/machined\[1\]: upgrade: arm: systemd-boot boots slot B \(bronze-b\.efi, Bronze \S+-next\) once at the next boot/, 60_000, from);
    expect(vm.lines.slice(from, armed).some((l) => /upgrade: write: EFI system partition: EFI\/Linux\/bronze-b\.efi written/.test(l))).toBe(true);
    const again = await vm.waitFor(/Linux version \d/, BOOT, armed);
    await vm.waitFor(/[Ss]ecure boot enabled/, 60_000, again);
    await vm.waitFor(running, BOOT, again);
    await vm.waitFor(/machined\[1\]: commit: slot B reached Running: it is now the slot systemd-boot boots \(default bronze-b\.efi\)/, 120_000, again);
    times['disk: upgrade to Running on slot B'] = (Date.now() - t1) / 1000;
    expect(await json('bootstatus')).toMatchObject({ booted: 'B', default: 'B', upgrade: { state: 'committed' } });
    expect(await json('securitystate')).toMatchObject({ secureBoot: true, bootedWithUKI: true });
    const v = await ctl(['version']);
    expect(v.stdout).toMatch(/Server:[\s\S]*Tag:\s+\S+-next/);

    // A tampered root in a UKI the firmware accepts (signed with Bronze's db key), as an
    // upgrade image signed with the release key: what a compromised build would look like.
    const bad = path.join(dir, 'tampered');
    fs.mkdirSync(bad);
    const tampered = tamperedInitramfs(`${OUT}/initramfs.xz`);
    fs.writeFileSync(path.join(bad, 'initramfs.xz'), tampered.cpio); // an uncompressed cpio: the kernel takes it as well
    for (const f of ['vmlinuz', 'cmdline', 'roothash']) fs.copyFileSync(path.join(OUT, f), path.join(bad, f));
    const buildEnv = { ...process.env, BRONZE_VERSION: 'v0.0.0-tampered' };
    execFileSync('image-builder/uki.sh', ['amd64', bad, path.join(bad, 'bronze.efi')], { env: buildEnv, stdio: 'pipe' });
    execFileSync('image-builder/upgrade.sh', ['amd64', bad, path.join(bad, 'upgrade.tar')], { env: buildEnv, stdio: 'pipe' });
    const from2 = vm.lines.length;
    const t2 = Date.now();
    const up2 = await ctl(['upgrade', '--image', path.join(bad, 'upgrade.tar'), '--preserve'], 600_000);
    expect(up2.code, up2.stderr).toBe(0);
    const armed2 = await vm.waitFor(/machined\[1\]: upgrade: arm: systemd-boot boots slot A \(bronze-a\.efi, Bronze v0\.0\.0-tampered\)/, 120_000, from2);
    const fatal = await vm.waitFor(/bronze preinit: FATAL: the root filesystem does not match the root hash it was booted with/, BOOT, armed2);
    expect(vm.lines[fatal]).toContain(`data block ${tampered.block} `);
    await vm.waitFor(/bronze preinit: recorded the failure in \/dev\/vda3\/A\/boot-failure for the other slot/, 60_000, fatal);
    const back = await vm.waitFor(/Linux version \d/, BOOT, fatal);
    await vm.waitFor(/machined\[1\]: upgrade to v0\.0\.0-tampered \(slot A\) failed: systemd-boot fell back to slot B: the root filesystem does not match/, BOOT, back);
    await vm.waitFor(running, BOOT, back);
    times['disk: tampered upgrade to Running on slot B again'] = (Date.now() - t2) / 1000;
    const st = await json('bootstatus');
    expect(st).toMatchObject({ booted: 'B', default: 'B', upgrade: { state: 'failed', to: 'A', error: expect.stringMatching(/^the root filesystem does not match the root hash it was booted with: data block \d+ /) } });
    expect(await json('securitystate')).toMatchObject({ secureBoot: true, bootedWithUKI: true });
    vm.kill();
    await vm.waitExit(10_000);
  }, 3 * BOOT);
  it('installs from secureboot/bronze.iso under Secure Boot: systemd-boot and the signed UKI on the ESP, and the disk boots enforcing', async () => {
    const disk = path.join(dir, 'install.raw');
    fs.closeSync(fs.openSync(disk, 'w'));
    fs.truncateSync(disk, 3 * 1024 ** 3);
    const { vars: isoVars, port, target, configFile, ctl } = await freshNode('sbi');

    const t0 = Date.now();
    const iso = new QemuVM({ apiPort: port, firmware: 'uefi-secureboot', ovmfVars: isoVars, boot: { kind: 'iso', path: SB_ISO }, drives: [`file=${disk},format=raw,if=virtio`] }, consoleFile('secureboot-iso-install')).start();
    vm = iso;
    await iso.waitFor(/[Ee]nroll/, BOOT);
    const linux = await iso.waitFor(/Linux version \d/, BOOT);
    await iso.waitFor(/[Ss]ecure boot enabled/, 60_000, linux);
    await iso.waitFor(/machined\[1\]: maintenance mode: no machine configuration/, BOOT, linux);
    times['iso: to maintenance mode'] = (Date.now() - t0) / 1000;
    const applied = await bronzectlUntilOk(['apply-config', '--insecure', '-n', target, '-f', configFile], { timeoutMs: 180_000 });
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).toMatch(/An install to \/dev\/vda starts now/);
    const esp = await iso.waitFor(/machined\[1\]: install: bootloader: UEFI Secure Boot: signed systemd-boot and slot A's signed UKI \(EFI\/Linux\/bronze-a\.efi\) on the EFI system partition/, BOOT, linux);
    const done = await iso.waitFor(/machined\[1\]: install done: rebooting into the installed disk/, BOOT, esp);
    // (The enrolment's reset needs QEMU to reboot, so it does: once the firmware starts again,
    // the node has shut down, and the ISO goes.)
    await iso.waitFor(/BdsDxe: loading/, 120_000, done);
    iso.kill();
    await iso.waitExit(10_000);
    times['iso: install (apply-config to reboot)'] = (Date.now() - t0) / 1000;
    // The ESP as the firmware reads it: systemd-boot, the UKI, loader.conf naming it; no GRUB.
    const mtools = { env: { ...process.env, MTOOLS_SKIP_CHECK: '1' }, encoding: 'utf8' as const };
    const espAt = `${disk}@@1M`;
    expect(execFileSync('mdir', ['-b', '-i', espAt, '::/EFI/Linux'], mtools).toLowerCase()).toMatch(/bronze-a\.efi/);
    expect(execFileSync('mtype', ['-i', espAt, '::/loader/loader.conf'], mtools)).toMatch(/^default bronze-a\.efi$/m);
    const loader = path.join(dir, 'installed-BOOTX64.EFI');
    execFileSync('mcopy', ['-n', '-i', espAt, '::/EFI/BOOT/BOOTX64.EFI', loader], mtools);
    expect(fs.readFileSync(loader).includes(Buffer.from('systemd-boot')), 'systemd-boot, not GRUB').toBe(true);
    execFileSync('sbverify', ['--cert', '_out/secureboot/db.crt', loader], { stdio: 'pipe' });

    const t1 = Date.now();
    vm = new QemuVM({ apiPort: port, firmware: 'uefi-secureboot', ovmfVars: isoVars, boot: { kind: 'disk', path: disk } }, consoleFile('secureboot-installed')).start();
    const again = await vm.waitFor(/Linux version \d/, BOOT);
    await vm.waitFor(/[Ss]ecure boot enabled/, 60_000, again);
    await vm.waitFor(/machined\[1\]: all 6 services Running/, BOOT, again);
    times['installed disk: to Running'] = (Date.now() - t1) / 1000;
    const bs = await ctl(['get', 'bootstatus', '-o', 'json']);
    expect(bs.code, bs.stderr).toBe(0);
    expect(JSON.parse(bs.stdout).spec).toMatchObject({ installed: true, booted: 'A', default: 'A' });
    const ss = await ctl(['get', 'securitystate', '-o', 'json']);
    expect(JSON.parse(ss.stdout).spec).toMatchObject({ secureBoot: true, bootedWithUKI: true });
    vm.kill();
    await vm.waitExit(10_000);
  }, 3 * BOOT);
});
