// End-to-end: installs on nodes that booted without boot media to copy from (QEMU -kernel,
// configured from a URL, as a PXE boot is), from a signed image fetched over HTTP:
//   - `bronzectl install` (the Install RPC): the node refuses a disk holding data without
//     --wipe, and a disk too small (exit code 1, in machinestatus, nothing written), then
//     downloads, verifies and installs to the blank disk, and comes back from that disk on the
//     image's version with its configuration from STATE;
//   - machine.install in the configuration the node boots with (disk, wipe, image): it installs
//     by itself over a disk holding data, and comes back from it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QemuVM } from '../../image-builder/qemu.ts';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { bronzectl, bronzectlUntilOk } from '../lib/bronzectl.ts';
import { consoleFile } from '../lib/console-log.ts';
import { serveFiles, type FileServer } from '../lib/http-files.ts';
import { freePort } from '../lib/ports.ts';

const NEXT = '_out/test-images/amd64/next/upgrade.tar';
const BOOT = 300_000;
const running = /machined\[1\]: all 6 services Running/;

describe('bronzectl install from an image URL', () => {
  let dir: string;
  let files: FileServer;
  let config: string;
  let port: number;
  let installConfig: string;
  let installFiles: FileServer;
  let vm: QemuVM | undefined;
  const ctl = (args: string[], timeoutMs = 300_000) => bronzectl(args, { config, timeoutMs });

  beforeAll(async () => {
    if (!fs.existsSync(NEXT)) throw new Error(`${NEXT} is missing: run \`make test-images\` first`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-install-rpc-'));
    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'inst', endpoint: 'https://10.0.2.15:6443', additionalSANs: ['127.0.0.1'], secrets });
    files = await serveFiles({ '/controlplane.yaml': cfg.controlplane, '/upgrade.tar': fs.readFileSync(NEXT) });
    // The second configuration installs at boot, over whatever /dev/vda holds.
    const install = generateConfigs({ clusterName: 'inst', endpoint: 'https://10.0.2.15:6443', additionalSANs: ['127.0.0.1'], secrets, installDisk: '/dev/vda', installImage: `http://10.0.2.2:${files.port}/upgrade.tar` });
    installConfig = install.controlplane.replace(/^(\s+)disk: \/dev\/vda$/m, '$1disk: /dev/vda\n$1wipe: true');
    installFiles = await serveFiles({ '/install.yaml': installConfig });
    port = await freePort();
    config = path.join(dir, 'bronzeconfig');
    await save(config, await newClientConfig({ contextName: 'inst', endpoints: [`127.0.0.1:${port}`], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
  });

  afterAll(async () => {
    vm?.kill();
    await files?.close();
    await installFiles?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('downloads, verifies and installs; the node comes back from the disk on that image', async () => {
    const blank = path.join(dir, 'blank.raw');
    fs.closeSync(fs.openSync(blank, 'w'));
    fs.truncateSync(blank, 2 * 1024 ** 3);
    const used = path.join(dir, 'used.raw');
    fs.writeFileSync(used, Buffer.concat([Buffer.alloc(4096), Buffer.from('precious data')]));
    fs.truncateSync(used, 2 * 1024 ** 3);
    const small = path.join(dir, 'small.raw');
    fs.closeSync(fs.openSync(small, 'w'));
    fs.truncateSync(small, 1024 ** 3);
    vm = new QemuVM(
      {
        apiPort: port,
        append: `ip=dhcp bronze.config=http://10.0.2.2:${files.port}/controlplane.yaml`,
        drives: [`file=${blank},format=raw,if=virtio`, `file=${used},format=raw,if=virtio`, `file=${small},format=raw,if=virtio`],
        noReboot: true,
      },
      consoleFile('install-rpc'),
    ).start();
    await vm.waitFor(running, BOOT);
    await bronzectlUntilOk(['version'], { config, timeoutMs: 120_000 });

    const refused = await ctl(['install', '--disk', '/dev/vdb', '--image', `http://10.0.2.2:${files.port}/upgrade.tar`]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/\/dev\/vdb holds data .*--wipe/);
    expect(refused.stderr, 'the disk is checked before anything is downloaded').not.toMatch(/download/);
    const head = Buffer.alloc(4109);
    const fd = fs.openSync(used, 'r');
    fs.readSync(fd, head, 0, head.length, 0);
    fs.closeSync(fd);
    expect(head.subarray(4096).toString()).toBe('precious data');

    // Too small a disk: bronzectl install fails (exit 1) naming why, before anything is
    // downloaded or written, and the console says so too. (An install machine.install starts,
    // which no caller waits for, also shows in machinestatus and bootstatus: lifecycle.test.ts.)
    const tooSmall = await ctl(['install', '--disk', '/dev/vdc', '--image', `http://10.0.2.2:${files.port}/upgrade.tar`]);
    expect(tooSmall.code).toBe(1);
    expect(tooSmall.stderr).toMatch(/FailedPrecondition desc = \/dev\/vdc: disk of 1073741824 bytes .* is too small/);
    expect(tooSmall.stderr).not.toMatch(/download/);
    await vm.waitFor(/machined\[1\]: install to \/dev\/vdc refused: .*too small/, 30_000);
    const zero = Buffer.alloc(1 << 20);
    const sfd = fs.openSync(small, 'r');
    for (const at of [0, 1024 ** 3 - zero.length]) {
      const got = Buffer.alloc(zero.length);
      fs.readSync(sfd, got, 0, got.length, at);
      expect(got.equals(zero), `nothing written at ${at}`).toBe(true);
    }
    fs.closeSync(sfd);

    const t0 = Date.now();
    const r = await ctl(['install', '--disk', '/dev/vda', '--image', `http://10.0.2.2:${files.port}/upgrade.tar`, '--extra-kernel-arg', 'bronze.hostname=from-install']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/download/);
    expect(r.stderr).toMatch(/verify/);
    expect(r.stderr).toMatch(/partition/);
    await vm.waitExit(120_000); // -no-reboot: QEMU exits when the node reboots into the disk
    console.log(`install-rpc: download, verify and install: ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    vm = new QemuVM({ apiPort: port, boot: { kind: 'disk', path: blank } }, consoleFile('install-rpc-disk')).start();
    await vm.waitFor(running, BOOT);
    expect(vm.lines.some((l) => /configuration from STATE/.test(l))).toBe(true);
    expect(vm.lines.some((l) => /Command line:.*bronze\.slot=A (bronze\.roothash=[0-9a-f]{64} )?bronze\.hostname=from-install/.test(l)), 'extra kernel arguments via grubenv').toBe(true);
    const v = await bronzectlUntilOk(['version'], { config, timeoutMs: 120_000 });
    expect(v.stdout).toMatch(/Server:[\s\S]*Tag:\s+v\S+-next/);

    const own = await ctl(['install', '--disk', '/dev/vda', '--wipe']);
    expect(own.code).not.toBe(0);
    expect(own.stderr).toMatch(/this node's own disk/);
    vm.kill();
    await vm.waitExit(10_000).catch(() => {});
  }, 4 * BOOT);

  it('installs by itself at boot from machine.install (disk, wipe, image), over a disk holding data', async () => {
    expect(installConfig).toMatch(/wipe: true/);
    const used = path.join(dir, 'used2.raw');
    fs.writeFileSync(used, Buffer.concat([Buffer.alloc(4096), Buffer.from('old data')]));
    fs.truncateSync(used, 2 * 1024 ** 3);
    vm = new QemuVM(
      { apiPort: port, append: `ip=dhcp bronze.config=http://10.0.2.2:${installFiles.port}/install.yaml`, drives: [`file=${used},format=raw,if=virtio`], noReboot: true },
      consoleFile('install-boot'),
    ).start();
    await vm.waitFor(/machined\[1\]: machine.install.disk \/dev\/vda: installing/, BOOT);
    await vm.waitFor(/install: partition: \/dev\/vda: GPT .*replacing data/, BOOT);
    await vm.waitFor(/machined\[1\]: install done: rebooting into the installed disk/, BOOT);
    await vm.waitExit(120_000);
    vm = new QemuVM({ apiPort: port, boot: { kind: 'disk', path: used } }, consoleFile('install-boot-disk')).start();
    await vm.waitFor(running, BOOT);
    expect(vm.lines.some((l) => /machine.install.disk \/dev\/vda: already installed/.test(l))).toBe(true);
    const v = await bronzectlUntilOk(['version'], { config, timeoutMs: 120_000 });
    expect(v.stdout).toMatch(/Server:[\s\S]*Tag:\s+v\S+-next/);
  }, 4 * BOOT);
});
