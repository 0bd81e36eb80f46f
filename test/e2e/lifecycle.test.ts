// End-to-end: a node's life on one disk, under QEMU/TCG, driven by bronzectl.
//   1. The ISO boots with a blank virtio disk (a second disk holding data, and a third of 1 GiB)
//      into maintenance mode; apply-config with machine.install.disk naming the 1 GiB disk says
//      an install starts, which fails (too small): the failure shows in machinestatus,
//      bootstatus and on the console, and the disk stays blank. apply-config naming the blank
//      disk installs Bronze to it and reboots; QEMU starts again from that disk alone (the ISO
//      detached) and the node comes back Running with its configuration from STATE. The other
//      disks are untouched.
//   2. `bronzectl upgrade --image <file>` to another build (version <v>-next): slot B, booted
//      once, committed once Running. `bronzectl rollback`: back on slot A and the old version.
//   3. A tampered image is refused before anything is written.
//   4. An image whose machined exits at once: the kernel panics, GRUB falls back to slot A by
//      itself, and machined records the failed upgrade.
//   5. Power cut (QEMU killed) right after an upgrade without --preserve armed GRUB, before the
//      reboot: the new slot boots, carries out the EPHEMERAL wipe recorded in META, and commits.
//   6. STATE with a garbage superblock: the node does not hide it (console, volumestatus,
//      machinestatus, an event), and, configured, never opens its API (issue 50): an insecure
//      apply-config is refused while the admin's client configuration is served (the recovery
//      identity in META); an authenticated apply runs in memory only and says so, `bronzectl
//      repair STATE` (xfs_repair) brings back the configuration on STATE, and what is applied
//      then persists.
// `bronzectl reset --reboot` (STATE and EPHEMERAL wiped, new filesystems, back in maintenance
// mode) is the README's last step: readme.test.ts runs it on the installed node and checks that.
// Each flow's time is printed (the closing note and bench/ quote them).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QemuVM } from '../../image-builder/qemu.ts';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { planLayout, partitionByName } from '../../src/disk/layout.ts';
import { bronzectl, bronzectlUntilOk } from '../lib/bronzectl.ts';
import { consoleFile } from '../lib/console-log.ts';
import { freePort } from '../lib/ports.ts';
import { xfsUuid } from '../lib/xfs.ts';

const OUT = '_out/amd64';
const ISO = `${OUT}/bronze.iso`;
const NEXT = '_out/test-images/amd64/next/upgrade.tar';
const BROKEN = '_out/test-images/amd64/broken/upgrade.tar';
const BOOT = 300_000;
const DISK_BYTES = 3 * 1024 ** 3;
const running = /machined\[1\]: all 6 services Running/;

const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** Whether a file holds only zero bytes. */
function allZero(file: string): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(8 << 20);
    for (let off = 0; ; off += buf.length) {
      const n = fs.readSync(fd, buf, 0, buf.length, off);
      if (n === 0) return true;
      if (!buf.subarray(0, n).every((b) => b === 0)) return false;
    }
  } finally {
    fs.closeSync(fd);
  }
}


describe('lifecycle: install from the ISO, upgrade, rollback, fallback, power cut, STATE repair', () => {
  let dir: string;
  let disk: string;
  let other: string;
  let otherSum: string;
  let small: string;
  let config: string;
  let target: string;
  let port: number;
  let vm: QemuVM | undefined;
  let version = '';
  const times: Record<string, number> = {};

  const timed = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = Date.now();
    const r = await fn();
    times[name] = (Date.now() - t0) / 1000;
    console.log(`lifecycle: ${name}: ${times[name]!.toFixed(1)} s`);
    return r;
  };
  const ctl = (args: string[], timeoutMs = 120_000) => bronzectl(args, { config, timeoutMs });
  const bootStatus = async () => {
    const r = await ctl(['get', 'bootstatus', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout).spec as { booted: string; default: string; next: string; version: string; slots: Record<string, { version: string }>; upgrade?: { state: string } };
  };
  const serverVersion = async () => {
    const r = await bronzectlUntilOk(['version'], { config, timeoutMs: 120_000 });
    return /Server:[\s\S]*?Tag:\s+(\S+)/.exec(r.stdout)?.[1];
  };
  /** Waits for the node to reboot (from `from` on the console) and come back Running. */
  const rebootedAndRunning = async (from: number, slot: 'A' | 'B') => {
    const reboot = await vm!.waitFor(/machined\[1\]: rebooting|Kernel panic/, BOOT, from);
    const booting = await vm!.waitFor(new RegExp(`bronze: booting slot ${slot}`), BOOT, reboot);
    await vm!.waitFor(running, BOOT, booting);
  };

  beforeAll(async () => {
    for (const f of [ISO, NEXT, BROKEN]) if (!fs.existsSync(f)) throw new Error(`${f} is missing: run \`make image test-images\` first`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-lifecycle-'));
    disk = path.join(dir, 'disk.raw');
    fs.closeSync(fs.openSync(disk, 'w'));
    fs.truncateSync(disk, DISK_BYTES);
    other = path.join(dir, 'other.raw');
    fs.writeFileSync(other, Buffer.concat([Buffer.from('another disk: the installer must not touch it\n'), Buffer.alloc(16 << 20, 0x5a)]));
    otherSum = sha256(other);
    small = path.join(dir, 'small.raw');
    fs.closeSync(fs.openSync(small, 'w'));
    fs.truncateSync(small, 1024 ** 3);

    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'life', endpoint: 'https://10.0.2.15:6443', additionalSANs: ['127.0.0.1'], secrets, installDisk: '/dev/vda' });
    const doc = parse(cfg.controlplane);
    doc.machine.network = { ...(doc.machine.network ?? {}), hostname: 'installed-node' };
    fs.writeFileSync(path.join(dir, 'controlplane.yaml'), stringify(doc));
    doc.machine.install.disk = '/dev/vdc';
    fs.writeFileSync(path.join(dir, 'too-small.yaml'), stringify(doc));
    port = await freePort();
    target = `127.0.0.1:${port}`;
    config = path.join(dir, 'bronzeconfig');
    await save(config, await newClientConfig({ contextName: 'life', endpoints: [target], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
  });

  afterAll(() => {
    vm?.kill();
    console.log(`lifecycle: times ${JSON.stringify(times)}`);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('an install to too small a disk fails visibly and writes nothing; then installs from the ISO to the blank disk, and boots from it with the configuration from STATE', async () => {
    const drives = [`file=${disk},format=raw,if=virtio`, `file=${other},format=raw,if=virtio`, `file=${small},format=raw,if=virtio`];
    const iso = new QemuVM({ apiPort: port, boot: { kind: 'iso', path: ISO }, drives, noReboot: true }, consoleFile('lifecycle-iso')).start();
    vm = iso;
    await iso.waitFor(/machined\[1\]: maintenance mode: no machine configuration/, BOOT);
    await bronzectlUntilOk(['get', 'resourcedefinitions', '--insecure', '-n', target], { timeoutMs: 180_000 });

    // The 1 GiB disk: the reply says an install starts; it fails after the reply, and says so.
    const from = iso.lines.length;
    const tooSmall = await bronzectl(['apply-config', '--insecure', '-n', target, '-f', path.join(dir, 'too-small.yaml')]);
    expect(tooSmall.code, tooSmall.stderr).toBe(0);
    expect(tooSmall.stderr).toMatch(/An install to \/dev\/vdc starts now/);
    await iso.waitFor(/machined\[1\]: install to \/dev\/vdc failed: \/dev\/vdc: disk of 1073741824 bytes .* is too small/, BOOT, from);
    // The configuration is the node's now: mTLS from here on.
    const ms = await bronzectlUntilOk(['get', 'machinestatus', '-o', 'json'], { config, timeoutMs: 120_000 });
    expect(ms.code, ms.stderr).toBe(0);
    expect(JSON.parse(ms.stdout).spec.status).toMatchObject({ ready: false, unmetConditions: [{ name: 'install', reason: expect.stringMatching(/^install to \/dev\/vdc failed: .*too small/) }] });
    const bs = await ctl(['get', 'bootstatus', '-o', 'json']);
    expect(JSON.parse(bs.stdout).spec).toMatchObject({ installed: false, install: { state: 'failed', disk: '/dev/vdc', error: expect.stringMatching(/too small/) } });
    expect(allZero(small), 'nothing was written to the small disk').toBe(true);

    await timed('install (apply-config to reboot)', async () => {
      // Only machine.install changed: applied without a reboot (as in Talos), and it installs.
      const r = await ctl(['apply-config', '-f', path.join(dir, 'controlplane.yaml')]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/An install to \/dev\/vda starts now/);
      await iso.waitFor(/machined\[1\]: install done: rebooting into the installed disk/, BOOT);
      await iso.waitExit(120_000); // -no-reboot: QEMU exits when the node reboots
    });
    expect(iso.lines.some((l) => /install: partition: \/dev\/vda/.test(l))).toBe(true);
    expect(sha256(other), 'the second disk is untouched').toBe(otherSum);
    expect(allZero(small), 'the third disk is untouched').toBe(true);

    vm = new QemuVM({ apiPort: port, boot: { kind: 'disk', path: disk }, drives: [drives[1]!] }, consoleFile('lifecycle-disk')).start();
    await timed('first boot from disk to Running', () => vm!.waitFor(running, BOOT));
    expect(vm.lines.some((l) => /configuration from STATE/.test(l))).toBe(true);
    version = (await serverVersion())!;
    expect(version).toMatch(/^v\d/);
    // networkd publishes the hostname once it has applied the configuration, which may be just
    // after all services are Running (they start at once, and none waits for another).
    let h = await ctl(['get', 'hostname']);
    for (const until = Date.now() + 30_000; !/installed-node/.test(h.stdout) && Date.now() < until; h = await ctl(['get', 'hostname'])) await new Promise((r) => setTimeout(r, 1000));
    expect(h.stdout, h.stderr).toMatch(/installed-node/);
    const st = await bootStatus();
    expect(st).toMatchObject({ booted: 'A', default: 'A', slots: { A: { version } } });
    // Issue 17 (item 7): no SMBIOS UUID here (QEMU without -uuid), so the default name comes
    // from the first physical link's MAC: the same on the ISO boot and on the disk boot,
    // never from the kernel's bond0 (bonding.max_bonds=0), which had a random MAC each boot.
    const named = [...iso.lines, ...vm.lines].flatMap((l) => /machined\[1\]: hostname set to (\S+) \((.*)\)/.exec(l)?.slice(1, 3) ?? []);
    expect(named.filter((_, i) => i % 2 === 0)).toEqual([named[0], named[0]]);
    expect(named[1]).toMatch(/^derived from the MAC address 52:54:00:12:34:56 of \w+ \(no SMBIOS UUID\)$/);
    const links = await ctl(['get', 'links', '-o', 'json']);
    expect(links.code, links.stderr).toBe(0);
    expect(links.stdout).not.toMatch(/"id": "bond0"/);
  }, 3 * BOOT);

  it('upgrades to another build through the API, then rolls back', async () => {
    const nothing = await ctl(['rollback']);
    expect(nothing.code).not.toBe(0);
    expect(nothing.stderr).toMatch(/slot B holds no image/);
    const from = vm!.lines.length;
    await timed('upgrade (upload to Running on slot B)', async () => {
      // --wait: bronzectl returns once the node is back on slot B with it committed.
      const r = await ctl(['upgrade', '--image', NEXT, '--wait', '--timeout', '8m'], 600_000);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/verify/);
      expect(r.stderr).toMatch(/waiting for node reboot\.\.\.\n.*: rebooted\nwaiting for node to be ready\.\.\.\n.*: upgraded to \S+-next \(slot B\)/);
      await rebootedAndRunning(from, 'B');
    });
    // Without --preserve, EPHEMERAL is wiped at the reboot.
    expect(vm!.lines.slice(from).some((l) => /wiped EPHEMERAL/.test(l))).toBe(true);
    expect(await serverVersion()).toBe(`${version}-next`);
    let st = await bootStatus();
    expect(st).toMatchObject({ booted: 'B', default: 'B', next: '', upgrade: { state: 'committed' } });

    const back = vm!.lines.length;
    await timed('rollback (to Running on slot A)', async () => {
      const r = await ctl(['rollback']);
      expect(r.code, r.stderr).toBe(0);
      await rebootedAndRunning(back, 'A');
    });
    expect(await serverVersion()).toBe(version);
    st = await bootStatus();
    expect(st).toMatchObject({ booted: 'A', default: 'A' });
  }, 3 * BOOT);

  it('refuses a tampered image before writing anything', async () => {
    // The broken image, tampered: had anything been written, slot B's recorded version would
    // now be <v>-broken instead of <v>-next.
    const tampered = path.join(dir, 'tampered.tar');
    const bytes = fs.readFileSync(BROKEN);
    const at = bytes.length - 200_000; // inside initramfs.xz, the last file
    bytes.writeUInt8(bytes.readUInt8(at) ^ 0xff, at);
    fs.writeFileSync(tampered, bytes);
    const before = await bootStatus();
    const from = vm!.lines.length;
    const r = await ctl(['upgrade', '--image', tampered], 300_000);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/initramfs\.xz/);
    expect(r.stderr).toMatch(/nothing was written/);
    expect(before.slots.B!.version).toBe(`${version}-next`);
    expect(await bootStatus()).toEqual(before);
    expect(vm!.lines.slice(from).some((l) => /machined\[1\]: rebooting/.test(l))).toBe(false);
  }, BOOT);

  it('falls back to the old slot by itself when the new image does not boot', async () => {
    const from = vm!.lines.length;
    await timed('broken upgrade (upload to Running again on slot A)', async () => {
      const r = await ctl(['upgrade', '--image', BROKEN, '--preserve'], 300_000);
      expect(r.code, r.stderr).toBe(0);
      const tried = await vm!.waitFor(/bronze: trying slot B/, BOOT, from);
      await vm!.waitFor(/this machined exits at once/, BOOT, tried);
      const panic = await vm!.waitFor(/Kernel panic/, BOOT, tried);
      await vm!.waitFor(/bronze: booting slot A/, BOOT, panic);
      await vm!.waitFor(running, BOOT, panic);
    });
    expect(await serverVersion()).toBe(version);
    const st = await bootStatus();
    expect(st).toMatchObject({ booted: 'A', default: 'A', next: '', upgrade: { state: 'failed' } });
    expect(vm!.lines.slice(from).some((l) => /wiped EPHEMERAL/.test(l)), '--preserve keeps EPHEMERAL').toBe(false);
    expect(vm!.lines.slice(from).some((l) => /upgrade to .* failed: GRUB fell back to slot A/.test(l))).toBe(true);
  }, 3 * BOOT);

  it('a power cut after an upgrade armed GRUB: the new slot boots, wipes EPHEMERAL as recorded in META, and commits', async () => {
    const before = xfsUuid(disk, 'EPHEMERAL');
    const from = vm!.lines.length;
    // The upgrade runs until GRUB is armed; then the power goes, before the reboot can wipe.
    const upgrading = ctl(['upgrade', '--image', NEXT], 300_000);
    const armed = await vm!.waitFor(/machined\[1\]: upgrade: arm: GRUB boots slot B/, BOOT, from);
    vm!.kill();
    await vm!.waitExit(10_000);
    await upgrading;
    const cut = vm!.lines.slice(from);
    expect(cut.some((l) => /wiped EPHEMERAL|starting reboot sequence/.test(l)), 'the power went before the reboot').toBe(false);
    expect(vm!.lines.slice(from, armed).some((l) => /upgrade: (start|verify|write): /.test(l)), 'each step on the console').toBe(true);
    expect(xfsUuid(disk, 'EPHEMERAL')).toBe(before);

    vm = new QemuVM({ apiPort: port, boot: { kind: 'disk', path: disk }, drives: [`file=${other},format=raw,if=virtio`] }, consoleFile('lifecycle-powercut')).start();
    await timed('power cut: boot of the new slot to Running', async () => {
      await vm!.waitFor(/bronze: trying slot B/, BOOT);
      await vm!.waitFor(/machined\[1\]: a wipe of EPHEMERAL recorded in META \(upgrade to Bronze .* in slot B without --preserve\) was not done/, BOOT);
      await vm!.waitFor(/machined\[1\]: wiped EPHEMERAL \(\/dev\/vda6\) at boot/, BOOT);
      await vm!.waitFor(/machined\[1\]: commit: slot B reached Running/, BOOT);
    });
    expect(xfsUuid(disk, 'EPHEMERAL'), 'EPHEMERAL is a fresh xfs').not.toBe(before);
    expect(await serverVersion()).toBe(`${version}-next`);
    expect(await bootStatus()).toMatchObject({ booted: 'B', default: 'B', next: '', upgrade: { state: 'committed' } });
  }, 3 * BOOT);

  it('a STATE that does not mount is reported, not hidden, and never opens the API: insecure apply-config is refused; an authenticated apply runs in memory only; repair brings the configuration back, and it persists', async () => {
    // An orderly power-off, then garbage over STATE's superblock and allocation-group headers.
    let r = await ctl(['shutdown']);
    expect(r.code, r.stderr).toBe(0);
    await vm!.waitExit(120_000);
    const state = partitionByName(planLayout(DISK_BYTES), 'STATE');
    const fd = fs.openSync(disk, 'r+');
    fs.writeSync(fd, randomBytes(4096), 0, 4096, state.offsetBytes);
    fs.closeSync(fd);

    vm = new QemuVM({ apiPort: port, boot: { kind: 'disk', path: disk }, drives: [`file=${other},format=raw,if=virtio`] }, consoleFile('lifecycle-state')).start();
    await vm.waitFor(/machined\[1\]: mount STATE \(\/dev\/vda5\) at \/system\/state \(xfs\): .*stays in memory: the machine configuration on it is not read/, BOOT);
    await vm.waitFor(/machined\[1\]: STATE is left untouched: repair it with `bronzectl repair STATE`/, BOOT);
    // Configured (META's record): not maintenance mode, but the failure and what to do.
    await vm.waitFor(/machined\[1\]: configuration unavailable: the machine configuration cannot be read: STATE \(\/dev\/vda5\) cannot be mounted/, BOOT);
    await vm.waitFor(/machined\[1\]: configuration unavailable: the API serves the recovery identity in META \(controlplane, valid until /, BOOT);
    await vm.waitFor(/machined\[1\]: configuration unavailable: .*`bronzectl repair STATE`/, BOOT);
    // The admin's client configuration is served (the recovery certificate is signed by the OS CA).
    const v = await bronzectlUntilOk(['version'], { config, timeoutMs: 180_000 });
    expect(v.code, v.stderr).toBe(0);
    expect(vm.lines.some((l) => /machined\[1\]: maintenance mode:/.test(l)), 'no maintenance mode on a configured node').toBe(false);

    // What maintenance mode would open is refused without credentials: the insecure apply, and reads.
    r = await bronzectl(['apply-config', '--insecure', '-n', target, '-f', path.join(dir, 'controlplane.yaml')]);
    expect(r.code, r.stdout + r.stderr).not.toBe(0);
    expect(r.stderr).toMatch(/Unauthenticated|certificate|handshake/i);
    expect(r.stderr).not.toMatch(/Applied/);
    const openRead = await bronzectl(['get', 'volumestatus', '--insecure', '-n', target]);
    expect(openRead.code, openRead.stdout).not.toBe(0);

    // The failure is reported: VolumeStatus, MachineStatus, the event stream.
    const vs = await ctl(['get', 'volumestatus', 'STATE', '-o', 'json']);
    expect(vs.code, vs.stderr).toBe(0);
    expect(JSON.parse(vs.stdout)).toMatchObject({
      metadata: { namespace: 'runtime', type: 'VolumeStatuses.block.talos.dev', id: 'STATE' },
      spec: { phase: 'failed', type: 'partition', location: '/dev/vda5', parentLocation: '/dev/vda', filesystem: 'xfs', errorMessage: expect.stringMatching(/^mount STATE .*bronzectl repair STATE/) },
    });
    const table = await ctl(['get', 'volumestatus']);
    expect(table.stdout).toMatch(/STATE\s+\d+\s+partition\s+failed\s+\/dev\/vda5\s/);
    expect(table.stdout).toMatch(/EPHEMERAL\s+\d+\s+partition\s+ready\s+\/dev\/vda6\s/);
    const ms = await ctl(['get', 'machinestatus', '-o', 'json']);
    expect(ms.code, ms.stderr).toBe(0);
    const status = JSON.parse(ms.stdout).spec;
    expect(status.stage).toBe('booting');
    const conditions = status.status.unmetConditions as Array<{ name: string; reason: string }>;
    expect([...new Set(conditions.map((c) => c.name))].sort()).toEqual(['config', 'volumes']);
    expect(conditions.find((c) => c.name === 'volumes')!.reason).toMatch(/^STATE \(\/dev\/vda5\) failed: mount STATE/);
    expect(conditions.filter((c) => c.name === 'config').map((c) => c.reason).join('\n')).toMatch(/STATE \(\/dev\/vda5\) cannot be mounted[\s\S]*recovery identity in META[\s\S]*bronzectl repair STATE/);
    // `events` streams until stopped: what it printed by then is enough.
    const ev = await ctl(['events', '--tail', '-1'], 30_000);
    expect(ev.stdout, ev.stderr).toMatch(/ConfigLoadErrorEvent\s+error\s+the machine configuration cannot be read: STATE \(\/dev\/vda5\) cannot be mounted/);

    // An authenticated apply cannot be kept: it runs from memory, and the reply says so.
    r = await ctl(['apply-config', '-f', path.join(dir, 'controlplane.yaml')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Applied in memory only: STATE \(\/dev\/vda5\) cannot be mounted .*This configuration is lost at the next reboot/);
    await bronzectlUntilOk(['version'], { config, timeoutMs: 120_000 });
    const from = vm.lines.length;
    await timed('repair STATE (xfs_repair to Running)', async () => {
      const rep = await ctl(['repair', 'STATE'], 300_000);
      expect(rep.code, rep.stderr).toBe(0);
      expect(rep.stderr).toMatch(/repair: STATE: Phase 1 - find and verify superblock/);
      expect(rep.stderr).toMatch(/verify: STATE \(\/dev\/vda5\) mounts again and holds a machine configuration/);
      const reboot = await vm!.waitFor(/machined\[1\]: rebooting/, BOOT, from);
      await vm!.waitFor(/machined\[1\]: mounted STATE \(\/dev\/vda5\) at \/system\/state/, BOOT, reboot);
      await vm!.waitFor(/machined\[1\]: configuration from STATE/, BOOT, reboot);
      await vm!.waitFor(running, BOOT, reboot);
    });
    expect(vm.lines.slice(from).some((l) => /machined\[1\]: repair: start: STATE/.test(l))).toBe(true);
    const after = await ctl(['get', 'volumestatus', 'STATE', '-o', 'json']);
    expect(JSON.parse(after.stdout).spec).toMatchObject({ phase: 'ready', location: '/dev/vda5' });
    const ready = await ctl(['get', 'machinestatus', '-o', 'json']);
    expect(JSON.parse(ready.stdout).spec.status.unmetConditions.filter((c: { name: string }) => ['volumes', 'config'].includes(c.name))).toEqual([]);

    // What is applied now goes to STATE on the disk.
    const p = await ctl(['patch', 'mc', '--mode', 'no-reboot', '--patch', '{"machine":{"network":{"hostname":"repaired-node"}}}']);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stderr).not.toMatch(/memory only/);
    const kept = await ctl(['read', '/system/state/config.yaml']);
    expect(kept.stdout).toMatch(/hostname: repaired-node/);
    const mounts = await ctl(['mounts']);
    expect(mounts.stdout).toMatch(/\/dev\/vda5\s.*\/system\/state/);
  }, 4 * BOOT);
});
