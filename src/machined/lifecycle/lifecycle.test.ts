import { ListLogger, silentLogger } from '../../lib/log.ts';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { MachineStatusReporter } from '../machine-status.ts';
import { MemoryState } from '../../state/memory.ts';
import { bootStatusDefinition } from '../../contract/resources/boot-status.ts';
import { machineStatusDefinition } from '../../contract/resources/machine-status.ts';
import { parseCmdline } from '../cmdline.ts';
import { statusOf } from '../api/status.ts';
import { NodeLifecycle, installSettings } from './lifecycle.ts';
import { META_CONFIGURED, META_RECOVERY, META_SIZE, readMeta, writeMeta } from '../../install/meta.ts';

const quiet = silentLogger;

function lifecycle(cmdline = '', log = quiet) {
  const state = new MemoryState();
  const sequences: string[] = [];
  const status = new MachineStatusReporter(state);
  const lc = new NodeLifecycle({
    log,
    state,
    status,
    cmdline: () => parseCmdline(cmdline),
    volumes: () => undefined,
    configText: () => undefined,
    requestSequence: (seq, reason) => void sequences.push(`${seq}: ${reason}`),
  });
  return { lc, state, sequences, status };
}

describe('installSettings', () => {
  it('reads machine.install from the v1alpha1 document of a multi-document configuration', () => {
    const text = 'apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: x\n---\nversion: v1alpha1\nmachine:\n  type: worker\n  install:\n    disk: /dev/vda\n    wipe: true\n    extraKernelArgs: [ip=dhcp]\n';
    expect(installSettings(text)).toEqual({ disk: '/dev/vda', wipe: true, image: '', extraKernelArgs: ['ip=dhcp'] });
  });
  it('is undefined without an install disk', () => {
    expect(installSettings(undefined)).toBeUndefined();
    expect(installSettings('version: v1alpha1\nmachine:\n  type: worker\n')).toBeUndefined();
    expect(installSettings('version: v1alpha1\nmachine:\n  install:\n    image: http://x/u.tar\n')).toBeUndefined();
  });
});

describe('NodeLifecycle off an installed disk', () => {
  it('publishes a boot status saying so', async () => {
    const { lc, state } = lifecycle('console=ttyS0');
    await lc.boot();
    const r = await state.get(bootStatusDefinition.defaultNamespace, bootStatusDefinition.type, 'boot');
    expect(r?.spec).toMatchObject({ installed: false, booted: '' });
  });

  it('refuses upgrade and rollback, naming why, and asks for no reboot', async () => {
    const { lc, sequences } = lifecycle();
    await expect(lc.upgrade({ image: 'http://127.0.0.1:1/u.tar', preserve: false, stage: false, force: false }, undefined, 0, () => {}, new AbortController().signal)).rejects.toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      message: expect.stringMatching(/not running from an installed disk/),
    });
    await expect(lc.checkRollback()).rejects.toMatchObject({ code: grpc.status.FAILED_PRECONDITION });
    await expect(lc.rollback('a')).rejects.toMatchObject({ code: grpc.status.FAILED_PRECONDITION });
    expect(sequences).toEqual([]);
  });

  it('booted from the ISO with Bronze installed on a disk: says so, not "install it first" (issue 17)', async () => {
    const part = (label: string) => ({ label, number: 1, name: label, device: `/dev/vda${label}`, start: 0, size: 0, uuid: '', type: '' });
    const disk = { disk: 'vda', device: '/dev/vda', uuid: 'u', partitions: { BOOT: part('BOOT'), META: part('META'), STATE: part('STATE') } };
    const lc = new NodeLifecycle({ log: quiet, state: new MemoryState(), cmdline: () => parseCmdline('console=ttyS0'), volumes: () => ({ disk, mounted: [] }) as never, configText: () => undefined, requestSequence: () => {} });
    const err = await lc.upgrade({ image: 'http://127.0.0.1:1/u.tar', preserve: false, stage: false, force: false }, undefined, 0, () => {}, new AbortController().signal).catch((e) => e);
    expect(err).toMatchObject({ code: grpc.status.FAILED_PRECONDITION });
    expect(err.message).toMatch(/^cannot upgrade: Bronze is installed on \/dev\/vda, but this boot did not come from it .*boot from the disk/);
    expect(err.message).not.toMatch(/install it first/);
  });

  it('refuses to wipe anything but STATE and EPHEMERAL; a reset of memory-backed volumes still powers off or reboots', async () => {
    const { lc, sequences } = lifecycle();
    await expect(lc.reset({ graceful: true, reboot: true, labels: ['BOOT'] }, 'a')).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, message: expect.stringMatching(/cannot wipe BOOT/) });
    await lc.reset({ graceful: true, reboot: false, labels: [] }, 'b');
    expect(sequences).toEqual(['shutdown: reset (STATE, EPHEMERAL)']);
    await lc.wipePending(); // nothing to wipe: no disk
  });

  it("a reset that wipes STATE removes META's configuration record in the wipe's own write; a reset of EPHEMERAL alone keeps it (issue 50)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-reset-meta-'));
    try {
      const meta = path.join(dir, 'meta');
      fs.writeFileSync(meta, Buffer.alloc(META_SIZE));
      writeMeta(meta, { 'install.disk': '/dev/vda', [META_CONFIGURED]: '2025-01-01T00:00:00.000Z', [META_RECOVERY]: '{"v":1}' });
      const part = (label: string, device: string) => ({ label, number: 1, name: label, device, start: 0, size: 0, uuid: '', type: '' });
      const disk = { disk: 'vda', device: '/dev/vda', uuid: 'u', partitions: { META: part('META', meta), STATE: part('STATE', path.join(dir, 'state')), EPHEMERAL: part('EPHEMERAL', path.join(dir, 'eph')) } };
      const make = () => new NodeLifecycle({ log: quiet, state: new MemoryState(), cmdline: () => parseCmdline(''), volumes: () => ({ disk, mounted: [], statuses: {} }) as never, configText: () => undefined, requestSequence: () => {} });
      await make().reset({ graceful: true, reboot: true, labels: ['EPHEMERAL'] }, 'a');
      let values = readMeta(meta).values;
      expect(values.get('wipe.pending')).toBe('EPHEMERAL');
      expect(values.has(META_CONFIGURED)).toBe(true);
      expect(values.has(META_RECOVERY)).toBe(true);
      await make().reset({ graceful: true, reboot: true, labels: [] }, 'b');
      values = readMeta(meta).values;
      expect(values.get('wipe.pending')).toBe('STATE,EPHEMERAL');
      expect(values.has(META_CONFIGURED)).toBe(false);
      expect(values.has(META_RECOVERY)).toBe(false);
      expect(values.get('install.disk')).toBe('/dev/vda');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an install names the missing disk', async () => {
    const { lc } = lifecycle();
    const err = await lc.install({ disk: '/dev/nonexistent-disk', wipe: false, image: '', extraKernelArgs: [] }, () => {}, new AbortController().signal).catch((e: unknown) => e);
    expect(err).toMatchObject({ message: expect.stringMatching(/\/dev\/nonexistent-disk: no such device/) });
    expect(statusOf(err)).toBe(grpc.status.INVALID_ARGUMENT);
  });
});

describe('a failed install is not hidden', () => {
  it.skipIf(process.getuid?.() !== 0)('too small a disk: the failure is logged, in MachineStatus and BootStatus, and nothing is written', async () => {
    // A real block device the size of the reported fault: 1 GiB, blank.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-install-small-'));
    const image = path.join(dir, 'small.raw');
    fs.closeSync(fs.openSync(image, 'w'));
    fs.truncateSync(image, 1 << 30);
    const loop = execFileSync('losetup', ['--find', '--show', image], { encoding: 'utf8' }).trim();
    try {
      const log = new ListLogger();
      const { lc, state, status, sequences } = lifecycle('console=ttyS0', log);
      await lc.boot();
      const config = `version: v1alpha1\nmachine:\n  type: controlplane\n  install:\n    disk: ${loop}\n`;
      expect(lc.installNotice(config)).toMatch(new RegExp(`An install to ${loop} starts now`));
      await lc.maybeInstall(config);

      expect(sequences, 'no reboot').toEqual([]);
      const said = log.lines.join('\n');
      expect(said).toMatch(new RegExp(`error: install to ${loop} failed: ${loop}: disk of 1073741824 bytes \\(1024.0 MiB\\) is too small`));
      expect(said).toMatch(/fix machine.install and apply the configuration again/);
      expect(status.spec().status.ready).toBe(false);
      expect(status.spec().status.unmetConditions).toEqual([{ name: 'install', reason: expect.stringMatching(new RegExp(`^install to ${loop} failed: .*too small`)) }]);
      const ms = await state.get(machineStatusDefinition.defaultNamespace, machineStatusDefinition.type, 'machine');
      expect(ms?.spec).toMatchObject({ status: { ready: false, unmetConditions: [{ name: 'install' }] } });
      const bs = await state.get(bootStatusDefinition.defaultNamespace, bootStatusDefinition.type, 'boot');
      expect(bs?.spec).toMatchObject({ installed: false, install: { state: 'failed', disk: loop, error: expect.stringMatching(/too small/) } });
      // Nothing half-written: the disk is still all zeros.
      const fd = fs.openSync(image, 'r');
      const buf = Buffer.alloc(4 << 20);
      for (const at of [0, (1 << 30) - buf.length]) {
        fs.readSync(fd, buf, 0, buf.length, at);
        expect(buf.every((b) => b === 0), `bytes at ${at}`).toBe(true);
      }
      fs.closeSync(fd);
      // The same settings are not tried again by themselves (a live change elsewhere must not start it again).
      expect(lc.installNotice(config)).toBeUndefined();
      await lc.maybeInstall(config);
      expect(log.lines.filter((l) => l.includes('failed: ')).length).toBe(1);
      // The Install call is answered with the refusal itself (FAILED_PRECONDITION: the disk cannot
      // take it), which is logged; the condition stays as the configuration's install left it.
      const err = await lc.install({ disk: loop, wipe: false, image: '', extraKernelArgs: [] }, () => {}, new AbortController().signal).catch((e: unknown) => e);
      expect(statusOf(err)).toBe(grpc.status.FAILED_PRECONDITION);
      expect(log.lines.at(-1)).toMatch(new RegExp(`^warn: install to ${loop} refused: .*too small`));
      expect(status.spec().status.unmetConditions.map((c) => c.name)).toEqual(['install']);
    } finally {
      execFileSync('losetup', ['-d', loop]);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
