// End-to-end: Secure Boot (amd64 UEFI) under QEMU/TCG, OVMF built with Secure Boot (SMM on),
// starting from OVMF's empty variable store: setup mode, no keys.
//   1. The Secure Boot EFI system partition (_out/amd64/secureboot/esp.img: signed systemd-boot,
//      the signed UKI, Bronze's PK/KEK/db to enroll): systemd-boot enrolls the keys by itself
//      and resets; the firmware then enforces Secure Boot and boots systemd-boot and the UKI;
//      the kernel says Secure Boot is on, the root is verified, and SecurityState says
//      secureBoot and bootedWithUKI (bronzectl in maintenance mode, --insecure).
//   2. With those keys enrolled, the same UKI signed by another key is refused by the firmware.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QemuVM } from '../../image-builder/qemu.ts';
import { bronzectlUntilOk } from '../lib/bronzectl.ts';
import { consoleFile } from '../lib/console-log.ts';
import { freePort } from '../lib/ports.ts';

const OUT = '_out/amd64';
const ESP = `${OUT}/secureboot/esp.img`;
const UKI = `${OUT}/secureboot/bronze.efi`;
const BOOT = 300_000;

describe('Secure Boot', () => {
  let dir: string;
  let vars: string;
  let vm: QemuVM | undefined;
  const times: Record<string, number> = {};

  beforeAll(() => {
    for (const f of [ESP, UKI, `${OUT}/roothash`]) if (!fs.existsSync(f)) throw new Error(`${f} is missing: run \`make image\` first`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-secureboot-'));
    vars = path.join(dir, 'OVMF_VARS.fd');
    fs.copyFileSync('/usr/share/OVMF/OVMF_VARS_4M.fd', vars);
  });

  afterAll(() => {
    vm?.kill();
    console.log(`secureboot: times ${JSON.stringify(times)}`);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

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
});
