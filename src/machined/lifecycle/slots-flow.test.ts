// NodeLifecycle's slot logic on the host: BOOT is a directory, META a file, STATE and
// EPHEMERAL sparse files (mkfs.xfs makes real filesystems on them). The same flows run for
// real under QEMU in test/e2e/lifecycle.test.ts; here each decision is checked directly.
import { ListLogger, silentLogger } from '../../lib/log.ts';
import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { pack } from 'tar-stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readMeta } from '../../install/meta.ts';
import { formatLuks2, unlockLuks2 } from '../../disk/luks2.ts';
import { volumeContent } from '../encryption.ts';
import { MemoryState } from '../../state/memory.ts';
import { parseCmdline } from '../cmdline.ts';
import type { NodeDisk } from '../volumes.ts';
import { statusOf } from '../api/status.ts';
import { META_WIPE_PENDING, NodeLifecycle, wipeRecordedVolumes } from './lifecycle.ts';
import { MachineStatusReporter } from '../machine-status.ts';
import { initGrubenv, readGrubenv } from './slots.ts';
import { LOADER_GUID, encodeEfiString, readEfiString } from './sdboot.ts';

const quiet = silentLogger;
const hasMkfsXfs = (() => {
  try {
    execFileSync('mkfs.xfs', ['-V'], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
})();

const key = generateKeyPairSync('ed25519');
const vmlinuz = Buffer.from('kernel of v9');
const initramfs = Buffer.alloc(3 << 20, 9);

const uki = Buffer.alloc(1 << 20, 7);

async function image(tamper = false, withUki = false): Promise<Buffer> {
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  const files = { vmlinuz: { size: vmlinuz.length, sha256: sha(vmlinuz) }, 'initramfs.xz': { size: initramfs.length, sha256: sha(initramfs) }, ...(withUki ? { 'bronze.efi': { size: uki.length, sha256: sha(uki) } } : {}) };
  const manifest = Buffer.from(JSON.stringify({ format: 'bronze-upgrade/1', version: 'v9.0.0', arch: 'amd64', roothash: 'ab'.repeat(32), files }) + '\n');
  const p = pack();
  const out = (async () => {
    const chunks: Buffer[] = [];
    for await (const c of p) chunks.push(Buffer.from(c as Uint8Array));
    return Buffer.concat(chunks);
  })();
  const bad = Buffer.from(initramfs);
  if (tamper) bad[1000] = 0;
  for (const [name, data] of [
    ['manifest.json', manifest],
    ['manifest.sig', sign(null, manifest, key.privateKey)],
    ['vmlinuz', vmlinuz],
    ['initramfs.xz', bad],
    ...(withUki ? ([['bronze.efi', uki]] as const) : []),
  ] as const) {
    await new Promise<void>((res, rej) => p.entry({ name, mtime: new Date(0) }, data, (err) => (err ? rej(err) : res())));
  }
  p.finalize();
  return out;
}

async function* chunks(b: Buffer, size = 65_536) {
  for (let i = 0; i < b.length; i += size) yield b.subarray(i, i + size);
}

describe('NodeLifecycle on an installed disk', () => {
  let root: string;
  let boot: string;
  let meta: string;
  let ephemeral: string;
  let sequences: string[];

  const part = (label: string, device: string) => ({ label, number: 1, name: label, device, start: 0, size: 0, uuid: '', type: '' });
  const theDisk = () => ({ disk: 'vda', device: '/dev/vda', uuid: 'u', partitions: { EFI: part('EFI', 'esp-device'), BOOT: part('BOOT', 'boot-device'), META: part('META', meta), EPHEMERAL: part('EPHEMERAL', ephemeral) } }) as unknown as NodeDisk;
  const node = (slot: 'A' | 'B', o: Partial<ConstructorParameters<typeof NodeLifecycle>[0]> = {}) => {
    const disk = theDisk();
    const state = new MemoryState();
    const lc = new NodeLifecycle({
      log: quiet,
      state,
      cmdline: () => parseCmdline(`console=ttyS0 bronze.slot=${slot}`),
      volumes: () => ({ disk, mounted: [], statuses: {} }),
      configText: () => undefined,
      requestSequence: (seq, reason) => void sequences.push(`${seq}: ${reason}`),
      trustedKeyFile: path.join(root, 'trusted.pub'),
      stageRoot: path.join(root, 'var'),
      mountBoot: (_device, fn) => fn(boot),
      ...o,
    });
    return { lc, state };
  };
  /** A node that has booted `slot` (boot() read GRUB's state: a trial or not). */
  const booted = async (slot: 'A' | 'B', o: Partial<ConstructorParameters<typeof NodeLifecycle>[0]> = {}) => {
    const n = node(slot, o);
    await n.lc.boot();
    return n;
  };
  const metaValues = () => Object.fromEntries(readMeta(meta).values);
  /** The xfs UUID on EPHEMERAL (bytes 32..48 of the superblock), or '' when it holds none. */
  const xfsUuid = () => {
    const sb = Buffer.alloc(48);
    const fd = fs.openSync(ephemeral, 'r');
    fs.readSync(fd, sb, 0, 48, 0);
    fs.closeSync(fd);
    return sb.subarray(0, 4).toString('latin1') === 'XFSB' ? sb.subarray(32, 48).toString('hex') : '';
  };
  const mkfs = (file: string) => execFileSync('mkfs.xfs', ['-q', '-f', file], { env: { ...process.env, TEST_DIR: '1', TEST_DEV: '1', QA_CHECK_FS: '1' }, stdio: 'pipe' });
  const env = () => Object.fromEntries(readGrubenv(boot));

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-lifecycle-'));
    boot = path.join(root, 'boot');
    fs.mkdirSync(path.join(boot, 'A'), { recursive: true });
    fs.mkdirSync(path.join(boot, 'B'));
    fs.writeFileSync(path.join(boot, 'A', 'vmlinuz'), 'kernel of v1');
    fs.writeFileSync(path.join(boot, 'A', 'initramfs.xz'), 'initramfs of v1');
    initGrubenv(boot, { saved_entry: 'A' });
    meta = path.join(root, 'meta');
    fs.writeFileSync(meta, Buffer.alloc(1 << 20));
    ephemeral = path.join(root, 'ephemeral');
    fs.closeSync(fs.openSync(ephemeral, 'w'));
    fs.truncateSync(ephemeral, 320 << 20);
    fs.writeFileSync(path.join(root, 'trusted.pub'), key.publicKey.export({ type: 'spki', format: 'pem' }));
    sequences = [];
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('an upgrade writes the other slot, arms it to boot once, records it, and leaves the reboot to the caller', async () => {
    const { lc } = await booted('A');
    const img = await image();
    const stages: string[] = [];
    const outcome = await lc.upgrade({ image: '', preserve: true, stage: false, force: false }, chunks(img), img.length, (p) => stages.push(p.stage), new AbortController().signal);
    expect(outcome).toEqual({ staged: false });
    expect(lc.pendingWipes).toEqual([]);
    expect(fs.readFileSync(path.join(boot, 'B', 'vmlinuz'), 'utf8')).toBe('kernel of v9');
    expect(fs.readFileSync(path.join(boot, 'A', 'vmlinuz'), 'utf8')).toBe('kernel of v1');
    expect(env()).toEqual({ saved_entry: 'A', next_entry: 'B', next_tries: '1' });
    expect(metaValues()).toMatchObject({ 'slot.B.version': 'v9.0.0', 'upgrade.from': 'A', 'upgrade.to': 'B', 'upgrade.state': 'trying' });
    expect(stages).toEqual(expect.arrayContaining(['receive', 'verify', 'write']));
    expect(sequences).toEqual([]);
    expect(fs.readdirSync(path.join(root, 'var')), 'the stage is cleaned up').toEqual([]);
    await lc.reboot('upgrade', 'x');
    expect(sequences).toEqual(['reboot: upgrade']);
  });

  it('a tampered image is refused and nothing is written', async () => {
    const { lc } = await booted('A');
    const img = await image(true);
    const before = { env: env(), meta: fs.readFileSync(meta) };
    const err = await lc.upgrade({ image: '', preserve: false, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal).catch((e: unknown) => e);
    expect(err).toMatchObject({ message: expect.stringMatching(/nothing was written.*initramfs\.xz|initramfs\.xz.*nothing was written/s) });
    expect(statusOf(err)).toBe(grpc.status.INVALID_ARGUMENT);
    expect(fs.readdirSync(path.join(boot, 'B'))).toEqual([]);
    expect(env()).toEqual(before.env);
    expect(fs.readFileSync(meta).equals(before.meta)).toBe(true);
    expect(lc.pendingWipes, 'no wipe was queued').toEqual([]);
  });

  it.skipIf(!hasMkfsXfs)('without --preserve, EPHEMERAL is wiped (a fresh xfs) when the reboot gets there', async () => {
    const { lc } = await booted('A');
    const img = await image();
    await lc.upgrade({ image: '', preserve: false, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal);
    expect(lc.pendingWipes).toEqual(['EPHEMERAL']);
    await lc.wipePending();
    const sb = Buffer.alloc(4);
    const fd = fs.openSync(ephemeral, 'r');
    fs.readSync(fd, sb, 0, 4, 0);
    fs.closeSync(fd);
    expect(sb.toString('latin1')).toBe('XFSB');
  });

  it('an encrypted EPHEMERAL is erased by the wipe, and the next boot formats it as its settings then say', async () => {
    const fd = fs.openSync(ephemeral, 'r+');
    formatLuks2(fd, 320 << 20, { keys: [{ slot: 0, passphrase: Buffer.from('k') }], iterations: 1000 });
    fs.closeSync(fd);
    const logs = new ListLogger();
    const { lc } = await booted('A', { log: logs });
    const img = await image();
    await lc.upgrade({ image: '', preserve: false, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal);
    expect(metaValues()).toMatchObject({ [META_WIPE_PENDING]: 'EPHEMERAL', 'wipe.encrypt': '' });
    await lc.wipePending();
    expect(volumeContent(ephemeral)).toBe('erased');
    expect(() => unlockLuks2(fs.openSync(ephemeral, 'r'), Buffer.from('k'))).toThrow(/not a LUKS2 volume/);
    expect(logs.lines.join('\n')).toMatch(/wiped EPHEMERAL \(.*\): its LUKS2 header and keyslots erased \(nothing on it can be decrypted again\); the next boot formats it$/m);
    expect(metaValues()['wipe.encrypt']).toBeUndefined();
  });

  it.skipIf(!hasMkfsXfs)('a plain EPHEMERAL the configuration encrypts is erased, not given an xfs, by the wipe the next boot does after a power cut', async () => {
    mkfs(ephemeral);
    const config = 'version: v1alpha1\nmachine:\n  type: worker\n---\napiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\nencryption:\n  keys:\n    - nodeID: {}\n      slot: 0\n';
    const { lc } = await booted('A', { configText: () => config });
    const img = await image();
    await lc.upgrade({ image: '', preserve: false, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal);
    expect(metaValues()).toMatchObject({ [META_WIPE_PENDING]: 'EPHEMERAL', 'wipe.encrypt': 'EPHEMERAL' });
    // The power goes; the next boot, before any configuration is read, still knows.
    const bootLog = new ListLogger();
    expect(await wipeRecordedVolumes(theDisk(), bootLog)).toEqual(['EPHEMERAL']);
    expect(volumeContent(ephemeral)).toBe('erased');
    expect(bootLog.lines.join('\n')).toMatch(/wiped EPHEMERAL \(.*\) at boot: the next boot formats it, encrypted/);
    expect(metaValues()['wipe.encrypt']).toBeUndefined();
  });

  it.skipIf(!hasMkfsXfs)('the wipe an upgrade asks for is in META before GRUB is armed: after a power cut, the next boot wipes EPHEMERAL', async () => {
    mkfs(ephemeral);
    const before = xfsUuid();
    const logs = new ListLogger();
    const { lc } = await booted('A', { log: logs });
    const img = await image();
    const stages: string[] = [];
    await lc.upgrade({ image: '', preserve: false, stage: false, force: false }, chunks(img), img.length, (p) => stages.push(p.stage), new AbortController().signal);
    expect(env()).toMatchObject({ next_entry: 'B' });
    expect(metaValues()).toMatchObject({ [META_WIPE_PENDING]: 'EPHEMERAL' });
    // The console tells each step: start, receive, verify, write, arm.
    const said = logs.lines.join('\n');
    for (const step of ['upgrade: start: slot B', 'upgrade: receive: ', 'upgrade: verify: signature and checksums good', 'upgrade: write: slot B: Bronze v9.0.0 written', 'upgrade: arm: GRUB boots slot B']) expect(said).toContain(step);
    expect(stages.indexOf('arm')).toBeGreaterThan(stages.lastIndexOf('write'));

    // The power goes: the reboot (and its wipe) never happens; this lifecycle is gone. The next
    // boot (slot B) carries out the wipe before mounting, and clears the record.
    const bootLog = new ListLogger();
    expect(await wipeRecordedVolumes(theDisk(), bootLog)).toEqual(['EPHEMERAL']);
    expect(xfsUuid(), 'a fresh xfs').not.toBe(before);
    expect(xfsUuid()).not.toBe('');
    expect(metaValues()[META_WIPE_PENDING]).toBeUndefined();
    expect(bootLog.lines.join('\n')).toMatch(/a wipe of EPHEMERAL recorded in META \(upgrade to Bronze v9.0.0 in slot B without --preserve\) was not done/);
    // Nothing recorded: the next boot wipes nothing.
    const again = xfsUuid();
    expect(await wipeRecordedVolumes(theDisk(), bootLog)).toEqual([]);
    expect(xfsUuid()).toBe(again);
  });

  it.skipIf(!hasMkfsXfs)('a reboot that does the wipe clears the record; --preserve records none', async () => {
    mkfs(ephemeral);
    const { lc } = await booted('A');
    const img = await image();
    await lc.upgrade({ image: '', preserve: false, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal);
    expect(metaValues()).toMatchObject({ [META_WIPE_PENDING]: 'EPHEMERAL' });
    await lc.wipePending();
    expect(metaValues()[META_WIPE_PENDING]).toBeUndefined();
    const n = await booted('A');
    await n.lc.upgrade({ image: '', preserve: true, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal);
    expect(metaValues()[META_WIPE_PENDING]).toBeUndefined();
  });

  it('a reset records its wipe in META before the reboot starts', async () => {
    const { lc } = await booted('A');
    await lc.reset({ graceful: true, reboot: true, labels: ['EPHEMERAL'] }, 'actor');
    expect(metaValues()).toMatchObject({ [META_WIPE_PENDING]: 'EPHEMERAL', 'wipe.reason': 'reset (EPHEMERAL)' });
    expect(sequences).toEqual(['reboot: reset (EPHEMERAL)']);
  });

  it('a stage left by an upgrade the power cut is removed at boot', async () => {
    const stale = path.join(root, 'var', 'upgrade');
    fs.mkdirSync(stale, { recursive: true });
    fs.writeFileSync(path.join(stale, 'initramfs.xz'), Buffer.alloc(1 << 20));
    const logs = new ListLogger();
    await booted('A', { log: logs });
    expect(fs.existsSync(stale)).toBe(false);
    expect(logs.lines.join('\n')).toMatch(/removed a stale upgrade stage .*var\/upgrade \(initramfs\.xz\)/);
  });

  it('an upgrade with no space to stage its image is RESOURCE_EXHAUSTED, and nothing is written', async (ctx) => {
    if (process.getuid?.() !== 0) return ctx.skip();
    const small = path.join(root, 'small');
    fs.mkdirSync(small);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', small]);
    try {
      const { lc } = await booted('A', { stageRoot: small });
      const img = await image(); // 3 MiB of initramfs: more than the 1 MiB there is
      const before = { env: env(), meta: fs.readFileSync(meta) };
      const err = await lc.upgrade({ image: '', preserve: false, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/cannot stage the upgrade image in .*small\/upgrade, nothing was written: .*ENOSPC/);
      expect(grpc.status[statusOf(err)]).toBe('RESOURCE_EXHAUSTED');
      expect(fs.readdirSync(path.join(boot, 'B'))).toEqual([]);
      expect(env()).toEqual(before.env);
      expect(fs.readFileSync(meta).equals(before.meta)).toBe(true);
      expect(fs.readdirSync(small), 'no partial stage left').toEqual([]);
    } finally {
      execFileSync('umount', [small]);
    }
  });

  it('--stage writes the slot and says so, leaving the reboot out', async () => {
    const { lc } = await booted('A');
    const img = await image();
    const outcome = await lc.upgrade({ image: '', preserve: true, stage: true, force: false }, chunks(img), img.length, () => {}, new AbortController().signal);
    expect(outcome).toEqual({ staged: true });
    expect(sequences).toEqual([]);
    expect(env()).toMatchObject({ next_entry: 'B' });
  });

  it('refuses to upgrade while the booted slot is on trial: the other slot is the known-good one', async () => {
    fs.writeFileSync(path.join(boot, 'B', 'vmlinuz'), 'kernel of v2');
    fs.writeFileSync(path.join(boot, 'B', 'initramfs.xz'), 'initramfs of v2');
    const { lc } = await booted('B', { trialTimeoutMs: 60_000 });
    const img = await image();
    await expect(lc.upgrade({ image: '', preserve: true, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal)).rejects.toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      message: expect.stringMatching(/slot B is on trial/),
    });
    expect(fs.readFileSync(path.join(boot, 'A', 'vmlinuz'), 'utf8')).toBe('kernel of v1');
    expect(env()).toEqual({ saved_entry: 'A' });
    // Rolling back from a trial is a reboot into the default, and the trial is not committed.
    await lc.rollback('actor');
    expect(sequences).toEqual(['reboot: rollback to slot A']);
    await lc.running();
    expect(env()).toEqual({ saved_entry: 'A' });
    await lc.quiesce();
  });

  it('once a reboot is under way, no operation starts', async () => {
    const { lc } = await booted('A');
    await lc.quiesce();
    await expect(lc.checkRollback()).rejects.toMatchObject({ message: expect.stringMatching(/shutting down or rebooting/) });
    const img = await image();
    await expect(lc.upgrade({ image: '', preserve: true, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal)).rejects.toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
    });
  });

  it('a tried slot becomes the default once Running', async () => {
    const first = await booted('A');
    const img = await image();
    await first.lc.upgrade({ image: '', preserve: true, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal);
    // GRUB boots B once and clears next_entry (tries used up) before the kernel starts.
    initGrubenv(boot, { saved_entry: 'A' });
    const { lc, state } = node('B', { trialTimeoutMs: 60_000 });
    await lc.boot();
    expect((await state.get('runtime', 'BootStatuses.runtime.bronze.dev', 'boot'))?.spec).toMatchObject({ installed: true, booted: 'B', default: 'A', slots: { B: { present: true, version: 'v9.0.0' } } });
    await lc.running();
    expect(env()).toEqual({ saved_entry: 'B' });
    expect(metaValues()).toMatchObject({ 'upgrade.state': 'committed' });
    expect((await state.get('runtime', 'BootStatuses.runtime.bronze.dev', 'boot'))?.spec).toMatchObject({ booted: 'B', default: 'B', upgrade: { state: 'committed' } });
    expect(sequences).toEqual([]);
  });

  it('a tried slot whose configuration could not be used is not committed, and falls back when its trial runs out (issue 50)', async () => {
    initGrubenv(boot, { saved_entry: 'A' });
    let held: string | undefined = 'invalid configuration from STATE: machine.foo: unknown field';
    const { lc } = node('B', { trialTimeoutMs: 300, holdCommit: () => held });
    await lc.boot();
    await lc.running();
    expect(env()).toEqual({ saved_entry: 'A' });
    // Fixed in time (an authenticated apply-config): the next call commits.
    held = undefined;
    await lc.running();
    expect(env()).toEqual({ saved_entry: 'B' });
    await new Promise((r) => setTimeout(r, 400));
    expect(sequences).toEqual([]);
    // Not fixed: the trial runs out and machined reboots into the known-good slot.
    initGrubenv(boot, { saved_entry: 'A' });
    const other = node('B', { trialTimeoutMs: 50, holdCommit: () => 'STATE cannot be mounted' });
    await other.lc.boot();
    await other.lc.running();
    await new Promise((r) => setTimeout(r, 150));
    expect(sequences).toEqual(['reboot: slot B trial timed out']);
    expect(env()).toEqual({ saved_entry: 'A' });
  });

  it('a tried slot whose declared container fails is given up at once, not when its clock runs out (issue 45)', async () => {
    initGrubenv(boot, { saved_entry: 'A' });
    const { lc } = node('B', { trialTimeoutMs: 60_000, holdCommit: () => 'container web: not healthy' });
    await lc.boot();
    await lc.running();
    expect(lc.abandonTrial('container web failed its health probe 3 times')).toBe(true);
    expect(sequences).toEqual(['reboot: trial given up: container web failed its health probe 3 times']);
    expect(env()).toEqual({ saved_entry: 'A' });
    // Committed, or not on trial: nothing to give up.
    const ok = node('A', {});
    await ok.lc.boot();
    await ok.lc.running();
    expect(ok.lc.abandonTrial('whatever')).toBe(false);
  });

  it('a tried slot that does not reach Running in time is given up: machined reboots into the old one', async () => {
    initGrubenv(boot, { saved_entry: 'A' });
    const { lc } = node('B', { trialTimeoutMs: 50 });
    await lc.boot();
    await new Promise((r) => setTimeout(r, 150));
    expect(sequences).toEqual(['reboot: slot B trial timed out']);
  });

  it('an upgrade GRUB fell back from is recorded as failed', async () => {
    const first = await booted('A');
    const img = await image();
    await first.lc.upgrade({ image: '', preserve: true, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal);
    initGrubenv(boot, { saved_entry: 'A' }); // B panicked; GRUB is back on A
    const { lc } = node('A');
    await lc.boot();
    expect(metaValues()).toMatchObject({ 'upgrade.state': 'failed', 'upgrade.error': expect.stringMatching(/^slot B did not boot through to machined and left no record of why/) });
  });

  it("why a tried slot failed is what its preinit recorded on BOOT: in META, BootStatus and the log; a slot that boots clears its own record", async () => {
    const first = await booted('A');
    const img = await image();
    await first.lc.upgrade({ image: '', preserve: true, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal);
    // B's preinit refused its root (image-builder/preinit/preinit.c writes this), GRUB is back on A.
    const why = 'the root filesystem does not match the root hash it was booted with: data block 1 (byte 4096) of /rootfs.sqsh failed to read (Input/output error); expected root hash ' + 'ab'.repeat(32) + '. Refusing to boot.';
    fs.writeFileSync(path.join(boot, 'B', 'boot-failure'), `${why}\n`);
    fs.writeFileSync(path.join(boot, 'A', 'boot-failure'), 'an older failure of A\n');
    initGrubenv(boot, { saved_entry: 'A' });
    const log = new ListLogger();
    const { lc, state } = node('A', { log });
    await lc.boot();
    expect(metaValues()).toMatchObject({ 'upgrade.state': 'failed', 'upgrade.error': why });
    const spec = (await state.get('runtime', 'BootStatuses.runtime.bronze.dev', 'boot'))?.spec;
    expect(spec).toMatchObject({ booted: 'A', upgrade: { state: 'failed', to: 'B', error: why }, slots: { A: { present: true }, B: { present: true, failure: why } } });
    expect((spec as { slots: Record<string, object> }).slots.A).not.toHaveProperty('failure');
    expect(fs.existsSync(path.join(boot, 'A', 'boot-failure'))).toBe(false);
    expect(log.lines.join('\n')).toMatch(/upgrade to .* \(slot B\) failed: GRUB fell back to slot A: the root filesystem does not match/);
    // Writing the slot anew (the next upgrade) clears its record with the old files.
    await lc.upgrade({ image: '', preserve: true, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal);
    expect(fs.existsSync(path.join(boot, 'B', 'boot-failure'))).toBe(false);
  });

  it('rollback boots the other slot once, which becomes the default when Running; refused when it is empty', async () => {
    const { lc } = await booted('A');
    await expect(lc.checkRollback()).rejects.toMatchObject({ code: grpc.status.FAILED_PRECONDITION, message: expect.stringMatching(/slot B holds no image/) });
    fs.writeFileSync(path.join(boot, 'B', 'vmlinuz'), 'k');
    fs.writeFileSync(path.join(boot, 'B', 'initramfs.xz'), 'i');
    await lc.checkRollback();
    await lc.rollback('actor');
    expect(env()).toEqual({ saved_entry: 'A', next_entry: 'B', next_tries: '1' });
    expect(sequences).toEqual(['reboot: rollback to slot B']);
    expect(metaValues()).toMatchObject({ 'rollback.from': 'A', 'rollback.to': 'B' });
    // GRUB boots B once (clearing next_entry); Running makes it the default.
    initGrubenv(boot, { saved_entry: 'A' });
    const after = await booted('B', { trialTimeoutMs: 60_000 });
    await after.lc.running();
    expect(env()).toEqual({ saved_entry: 'B' });
  });

  // Issue 17: after a rollback, `get bootstatus` showed only the last upgrade.
  describe('rollback records in META and BootStatus', () => {
    const status = async (state: MemoryState) => (await state.get('runtime', 'BootStatuses.runtime.bronze.dev', 'boot'))?.spec as Record<string, unknown>;
    const withSlotB = () => {
      fs.writeFileSync(path.join(boot, 'B', 'vmlinuz'), 'k');
      fs.writeFileSync(path.join(boot, 'B', 'initramfs.xz'), 'i');
    };

    it('a rollback is recorded as trying, then committed once the slot is Running; BootStatus shows it as the last change', async () => {
      const first = await booted('A');
      const img = await image();
      await first.lc.upgrade({ image: '', preserve: true, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal);
      initGrubenv(boot, { saved_entry: 'A' });
      const onB = node('B', { trialTimeoutMs: 60_000 });
      await onB.lc.boot();
      await onB.lc.running(); // the upgrade to B is committed
      await new Promise((r) => setTimeout(r, 5)); // the rollback's time comes after the upgrade's
      await onB.lc.rollback('actor');
      expect(metaValues()).toMatchObject({ 'rollback.from': 'B', 'rollback.to': 'A', 'rollback.state': 'trying', 'upgrade.state': 'committed' });
      initGrubenv(boot, { saved_entry: 'B' }); // GRUB booted A once
      const onA = node('A', { trialTimeoutMs: 60_000 });
      await onA.lc.boot();
      await onA.lc.running();
      expect(metaValues()).toMatchObject({ 'rollback.state': 'committed' });
      const st = await status(onA.state);
      expect(st).toMatchObject({ booted: 'A', default: 'A', upgrade: { state: 'committed', from: 'A', to: 'B' }, rollback: { state: 'committed', from: 'B', to: 'A' } });
      expect(st.last).toBe('rollback B->A committed');
      await onA.lc.quiesce();
    });

    it('a rollback whose slot does not come up is recorded as failed', async () => {
      const { lc } = await booted('A');
      withSlotB();
      await lc.rollback('actor');
      initGrubenv(boot, { saved_entry: 'A' }); // B panicked; GRUB is back on A
      const again = node('A');
      await again.lc.boot();
      expect(metaValues()).toMatchObject({ 'rollback.to': 'B', 'rollback.state': 'failed' });
      expect((await status(again.state)).last).toBe('rollback A->B failed');
    });

    it('a rollback from a slot on trial (a reboot into the default) is committed when the default boots', async () => {
      withSlotB();
      const onTrial = await booted('B', { trialTimeoutMs: 60_000 }); // saved_entry is A
      await onTrial.lc.rollback('actor');
      expect(metaValues()).toMatchObject({ 'rollback.from': 'B', 'rollback.to': 'A', 'rollback.state': 'trying' });
      await onTrial.lc.quiesce();
      const back = await booted('A');
      expect(metaValues()).toMatchObject({ 'rollback.state': 'committed' });
      expect((await status(back.state)).rollback).toMatchObject({ state: 'committed', from: 'B', to: 'A' });
    });
  });
  describe('booted by systemd-boot from a slot\'s signed UKI (Secure Boot)', () => {
    let esp: string;
    let efivars: string;
    let remounts: boolean[];
    const conf = () => fs.readFileSync(path.join(esp, 'loader/loader.conf'), 'utf8');
    /** A node whose firmware ran systemd-boot's entry for `slot` (no bronze.slot on its command line: the UKI's is fixed). */
    const sdNode = (slot: 'A' | 'B', o: Partial<ConstructorParameters<typeof NodeLifecycle>[0]> = {}) => {
      fs.writeFileSync(path.join(efivars, `LoaderEntrySelected-${LOADER_GUID}`), encodeEfiString(`bronze-${slot.toLowerCase()}.efi`));
      return node(slot, { cmdline: () => parseCmdline('console=ttyS0 bronze.roothash=' + 'cd'.repeat(32)), efivars, mountEsp: (_d, fn) => fn(esp), remountEfivars: (w) => void remounts.push(w), ...o });
    };
    beforeEach(() => {
      esp = path.join(root, 'esp');
      fs.mkdirSync(path.join(esp, 'EFI/Linux'), { recursive: true });
      fs.writeFileSync(path.join(esp, 'EFI/Linux/bronze-a.efi'), 'UKI of v1');
      fs.mkdirSync(path.join(esp, 'loader'));
      fs.writeFileSync(path.join(esp, 'loader/loader.conf'), 'timeout 1\ndefault bronze-a.efi\nsecure-boot-enroll force\n');
      efivars = path.join(root, 'efivars');
      fs.mkdirSync(efivars);
      remounts = [];
    });

    it('an upgrade writes the UKI beside the booted one and arms it once through LoaderEntryOneShot; once Running it is the default', async () => {
      const a = sdNode('A');
      await a.lc.boot();
      const img = await image(false, true);
      const stages: string[] = [];
      await a.lc.upgrade({ image: '', preserve: true, stage: false, force: false }, chunks(img), img.length, (p) => stages.push(p.stage), new AbortController().signal);
      expect(fs.readFileSync(path.join(esp, 'EFI/Linux/bronze-b.efi')).equals(uki)).toBe(true);
      expect(fs.readFileSync(path.join(esp, 'EFI/Linux/bronze-a.efi'), 'utf8')).toBe('UKI of v1');
      expect(fs.readFileSync(path.join(boot, 'B', 'vmlinuz'), 'utf8')).toBe('kernel of v9');
      expect(readEfiString(efivars, 'LoaderEntryOneShot')).toBe('bronze-b.efi');
      expect(remounts).toEqual([true, false]);
      expect(env()).toEqual({ saved_entry: 'A', next_entry: 'B', next_tries: '1' });
      expect(conf()).toContain('default bronze-a.efi');
      expect(metaValues()).toMatchObject({ 'upgrade.to': 'B', 'upgrade.state': 'trying' });

      // systemd-boot read (and removed) the one-shot and started bronze-b.efi.
      fs.rmSync(path.join(efivars, `LoaderEntryOneShot-${LOADER_GUID}`));
      const b = sdNode('B', { trialTimeoutMs: 60_000 });
      await b.lc.boot();
      expect(env(), 'the boot-once was used up').toEqual({ saved_entry: 'A' });
      expect((await b.state.get('runtime', 'BootStatuses.runtime.bronze.dev', 'boot'))?.spec).toMatchObject({ installed: true, booted: 'B', default: 'A' });
      await b.lc.running();
      expect(conf()).toBe('timeout 1\nsecure-boot-enroll force\ndefault bronze-b.efi\n');
      expect(env()).toEqual({ saved_entry: 'B' });
      expect(metaValues()).toMatchObject({ 'upgrade.state': 'committed' });
    });

    it('an image without a UKI is refused before anything is written', async () => {
      const a = sdNode('A');
      await a.lc.boot();
      const img = await image();
      const err = await a.lc.upgrade({ image: '', preserve: false, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal).catch((e: unknown) => e);
      expect(err).toMatchObject({ message: expect.stringMatching(/nothing was written: this node boots slot A through systemd-boot from a signed UKI \(bronze-a\.efi\).*carries none \(bronze\.efi\)/) });
      expect(statusOf(err)).toBe(grpc.status.FAILED_PRECONDITION);
      expect(fs.readdirSync(path.join(boot, 'B'))).toEqual([]);
      expect(fs.readdirSync(path.join(esp, 'EFI/Linux'))).toEqual(['bronze-a.efi']);
      expect(env()).toEqual({ saved_entry: 'A' });
      expect(readEfiString(efivars, 'LoaderEntryOneShot')).toBeUndefined();
      expect(a.lc.pendingWipes).toEqual([]);
    });

    it('a tried UKI that did not come up: systemd-boot booted the default again, and the upgrade is recorded as failed', async () => {
      const a = sdNode('A');
      await a.lc.boot();
      const img = await image(false, true);
      await a.lc.upgrade({ image: '', preserve: true, stage: false, force: false }, chunks(img), img.length, () => {}, new AbortController().signal);
      fs.rmSync(path.join(efivars, `LoaderEntryOneShot-${LOADER_GUID}`)); // read by systemd-boot; B panicked
      const again = sdNode('A');
      await again.lc.boot();
      expect(metaValues()).toMatchObject({ 'upgrade.state': 'failed', 'upgrade.error': expect.stringMatching(/^slot B did not boot through to machined/) });
      expect(env()).toEqual({ saved_entry: 'A' });
      expect(conf()).toContain('default bronze-a.efi');
    });

    it('a rollback from a committed slot arms the other UKI once; refused when the ESP has none for it', async () => {
      fs.writeFileSync(path.join(boot, 'B', 'vmlinuz'), 'kernel of v0');
      fs.writeFileSync(path.join(boot, 'B', 'initramfs.xz'), 'initramfs of v0');
      const a = sdNode('A');
      await a.lc.boot();
      await expect(a.lc.rollback('x')).rejects.toThrow(/no UKI for slot B \(EFI\/Linux\/bronze-b\.efi\)/);
      expect(readEfiString(efivars, 'LoaderEntryOneShot')).toBeUndefined();
      fs.writeFileSync(path.join(esp, 'EFI/Linux/bronze-b.efi'), 'UKI of v0');
      await a.lc.rollback('x');
      expect(readEfiString(efivars, 'LoaderEntryOneShot')).toBe('bronze-b.efi');
      expect(env()).toMatchObject({ next_entry: 'B' });
      expect(sequences).toEqual(['reboot: rollback to slot B']);
    });
  });
});
