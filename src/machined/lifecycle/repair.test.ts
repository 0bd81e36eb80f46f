// A STATE that does not mount, for real, on the host: xfs on a loop device with a configuration
// in it, its first 4 KiB (superblock and allocation-group headers) overwritten with garbage.
// mountNodeVolumes leaves it untouched and reports it failed; NodeLifecycle.repair runs the
// real xfs_repair, checks it read-only, and the configuration is there again. The same fault
// runs under QEMU in test/e2e/lifecycle.test.ts.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListLogger } from '../../lib/log.ts';
import { initNative } from '../../lib/native.ts';
import { umount } from '../../lib/sys.ts';
import { MemoryState } from '../../state/memory.ts';
import { statusOf } from '../api/status.ts';
import { parseCmdline } from '../cmdline.ts';
import { MachineStatusReporter } from '../machine-status.ts';
import { mountNodeVolumes, type MountedVolumes } from '../volumes.ts';
import { withMount } from './fs-tools.ts';
import { NodeLifecycle } from './lifecycle.ts';

const root = process.getuid?.() === 0;
const MiB = 1 << 20;
const CONFIG = 'version: v1alpha1\nmachine:\n  type: worker\n';

/** Overwrites the first `bytes` of a device with random bytes, synchronously. */
function garbage(device: string, bytes: number, at = 0): void {
  const fd = fs.openSync(device, 'r+');
  try {
    fs.writeSync(fd, randomBytes(bytes), 0, bytes, at);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

describe.skipIf(!root)('a STATE that does not mount', () => {
  let tmp: string;
  let loops: string[] = [];
  let sys: string;
  let dev: string;

  /** A fake /sys naming one disk 'vdq' whose partitions 5 and 6 (STATE, EPHEMERAL) are loop devices with xfs. */
  function node(): { state: string; ephemeral: string } {
    for (const l of loops) execFileSync('losetup', ['-d', l]);
    loops = [];
    sys = path.join(tmp, 'sys');
    dev = path.join(tmp, 'dev');
    fs.rmSync(sys, { recursive: true, force: true });
    fs.rmSync(dev, { recursive: true, force: true });
    fs.mkdirSync(dev, { recursive: true });
    const disk = path.join(dev, 'vdq');
    fs.writeFileSync(disk, '');
    fs.truncateSync(disk, 256 * MiB);
    const args = ['--clear'];
    ['EFI', 'BIOS', 'BOOT', 'META', 'STATE', 'EPHEMERAL'].forEach((n, i) => args.push(`--new=${i + 1}:0:${['+4MiB', '+1MiB', '+8MiB', '+1MiB', '+100MiB', '0'][i]}`, `--change-name=${i + 1}:${n}`));
    execFileSync('sgdisk', [...args, disk], { stdio: 'pipe' });
    const dir = path.join(sys, 'class', 'block', 'vdq');
    fs.mkdirSync(path.join(dir, 'queue'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'size'), `${(256 * MiB) / 512}\n`);
    fs.writeFileSync(path.join(dir, 'queue', 'logical_block_size'), '512\n');
    const out: Record<number, string> = {};
    for (const n of [5, 6]) {
      const info = execFileSync('sgdisk', [`--info=${n}`, disk], { encoding: 'utf8' });
      const first = Number(/First sector: (\d+)/.exec(info)![1]);
      const last = Number(/Last sector: (\d+)/.exec(info)![1]);
      const loop = execFileSync('losetup', ['--find', '--show', '--offset', String(first * 512), '--sizelimit', String((last - first + 1) * 512), disk], { encoding: 'utf8' }).trim();
      loops.push(loop);
      execFileSync('mkfs.xfs', ['-q', '-f', loop], { env: { ...process.env, TEST_DIR: '1', TEST_DEV: '1', QA_CHECK_FS: '1' }, stdio: 'pipe' });
      fs.symlinkSync(loop, path.join(dev, `vdq${n}`));
      for (const d of [path.join(dir, `vdq${n}`), path.join(sys, 'class', 'block', `vdq${n}`)]) {
        fs.mkdirSync(d, { recursive: true });
        fs.writeFileSync(path.join(d, 'partition'), `${n}\n`);
      }
      out[n] = loop;
    }
    return { state: out[5]!, ephemeral: out[6]! };
  }

  const targets = () => ({ STATE: path.join(tmp, 'state'), EPHEMERAL: path.join(tmp, 'var') });
  const unmountAll = (v: MountedVolumes) => {
    for (const m of [...v.mounted].reverse()) umount(m.target);
  };

  beforeAll(async () => {
    await initNative();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-repair-'));
  });
  afterAll(() => {
    for (const l of loops) execFileSync('losetup', ['-d', l]);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('is reported failed and left untouched; repair brings the configuration back', async () => {
    const { state } = node();
    await withMount(state, 'xfs', 'put', async (d) => fs.writeFileSync(path.join(d, 'config.yaml'), CONFIG), { root: tmp });
    garbage(state, 4096);
    const corrupted = fs.readFileSync(state).subarray(0, 8 * MiB);

    const log = new ListLogger();
    const volumes = await mountNodeVolumes(log, { sysRoot: sys, devRoot: dev, targets: targets(), replace: () => {} });
    try {
      expect(volumes.mounted.map((m) => m.label)).toEqual(['EPHEMERAL']);
      expect(volumes.statuses.STATE).toMatchObject({ phase: 'failed', preFailPhase: 'located', type: 'partition', location: path.join(dev, 'vdq5'), partitionIndex: 5, parentLocation: path.join(dev, 'vdq'), filesystem: 'xfs' });
      expect(volumes.statuses.STATE!.errorMessage).toMatch(/mount STATE .*: .*; repair it with `bronzectl repair STATE` \(xfs_repair\), or erase it with `bronzectl reset --system-labels-to-wipe STATE --reboot`/);
      expect(volumes.statuses.EPHEMERAL).toMatchObject({ phase: 'ready' });
      const said = log.lines.join('\n');
      expect(said).toMatch(/error: mount STATE .* stays in memory: the machine configuration on it is not read, and a configuration applied now is kept in memory only/);
      expect(said).toMatch(/error: STATE is left untouched: repair it with `bronzectl repair STATE`/);
      expect(fs.readFileSync(state).subarray(0, 8 * MiB).equals(corrupted), 'untouched').toBe(true);

      // The lifecycle publishes it, and the machine is not ready.
      const st = new MemoryState();
      const status = new MachineStatusReporter(st);
      const repairLog = new ListLogger();
      const lc = new NodeLifecycle({
        log: repairLog,
        state: st,
        status,
        cmdline: () => parseCmdline('console=ttyS0'),
        volumes: () => volumes,
        configText: () => undefined,
        requestSequence: () => {},
        stageRoot: path.join(tmp, 'stage'),
        mountCheck: (d, fn) => withMount(d, 'xfs', 'check', fn, { readOnly: true, root: tmp }),
      });
      await lc.boot();
      const vs = await st.get('runtime', 'VolumeStatuses.block.talos.dev', 'STATE');
      expect(vs?.spec).toMatchObject({ phase: 'failed', location: path.join(dev, 'vdq5') });
      expect((await st.get('runtime', 'VolumeStatuses.block.talos.dev', 'EPHEMERAL'))?.spec).toMatchObject({ phase: 'ready' });
      expect(status.spec().status).toMatchObject({ ready: false, unmetConditions: [{ name: 'volumes', reason: expect.stringMatching(/^STATE \(.*vdq5\) failed: mount STATE/) }] });

      // A mounted, working volume is not "repaired".
      const busy = await lc.repair({ labels: ['EPHEMERAL'], zeroLog: false }, () => {}, new AbortController().signal).catch((e: unknown) => e);
      expect(statusOf(busy)).toBe(grpc.status.FAILED_PRECONDITION);
      expect((busy as Error).message).toMatch(/EPHEMERAL: it is mounted at .* and works/);

      const progress: string[] = [];
      await lc.repair({ labels: ['state'], zeroLog: false }, (p) => progress.push(`${p.stage}: ${p.message}`), new AbortController().signal);
      expect(progress.some((p) => /^repair: STATE: Phase 1 - find and verify superblock/.test(p)), progress.join('\n')).toBe(true);
      expect(progress).toContain(`verify: STATE (${path.join(dev, 'vdq5')}) mounts again and holds a machine configuration`);
      expect(progress.at(-1)).toMatch(/^reboot: repaired STATE: rebooting to mount it/);
      expect(repairLog.lines.join('\n')).toMatch(/repair: start: STATE/);
      expect(repairLog.lines.join('\n')).toMatch(/repair: verify: STATE .* mounts again/);
    } finally {
      unmountAll(volumes);
    }
    // The next boot mounts it, with the configuration.
    const again = await mountNodeVolumes(new ListLogger(), { sysRoot: sys, devRoot: dev, targets: targets(), replace: () => {} });
    try {
      expect(again.mounted.map((m) => m.label)).toEqual(['STATE', 'EPHEMERAL']);
      expect(fs.readFileSync(path.join(targets().STATE, 'config.yaml'), 'utf8')).toBe(CONFIG);
    } finally {
      unmountAll(again);
    }
  });

  it('a volume xfs_repair cannot repair: DATA_LOSS, and the advice is to reset it', async () => {
    const { state } = node();
    // No superblock anywhere: nothing to recover from.
    const fd = fs.openSync(state, 'r+');
    const zero = Buffer.alloc(MiB);
    const size = 100 * MiB;
    for (let off = 0; off < size; off += zero.length) fs.writeSync(fd, zero, 0, zero.length, off);
    fs.closeSync(fd);
    const volumes = await mountNodeVolumes(new ListLogger(), { sysRoot: sys, devRoot: dev, targets: targets(), replace: () => {} });
    try {
      expect(volumes.statuses.STATE?.phase).toBe('failed');
      const st = new MemoryState();
      const lc = new NodeLifecycle({ log: new ListLogger(), state: st, cmdline: () => parseCmdline(''), volumes: () => volumes, configText: () => undefined, requestSequence: () => {}, stageRoot: path.join(tmp, 'stage') });
      await lc.boot();
      const err = await lc.repair({ labels: ['STATE'], zeroLog: false }, () => {}, new AbortController().signal).catch((e: unknown) => e);
      expect(statusOf(err)).toBe(grpc.status.DATA_LOSS);
      expect((err as Error).message).toMatch(/repair of STATE .* failed: xfs_repair exited with 1.*erase it with `bronzectl reset --system-labels-to-wipe STATE --reboot`/s);
      expect((await st.get('runtime', 'VolumeStatuses.block.talos.dev', 'STATE'))?.spec).toMatchObject({ phase: 'failed', errorMessage: expect.stringMatching(/^xfs_repair failed: /) });
    } finally {
      unmountAll(volumes);
    }
  }, 60_000);
});
