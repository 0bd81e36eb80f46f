import { silentLogger } from '../../lib/log.ts';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { MemoryState } from '../../state/memory.ts';
import { bootStatusDefinition } from '../../state/definitions.ts';
import { parseCmdline } from '../cmdline.ts';
import { statusOf } from '../api/status.ts';
import { NodeLifecycle, installSettings } from './lifecycle.ts';

const quiet = silentLogger;

function lifecycle(cmdline = '') {
  const state = new MemoryState();
  const sequences: string[] = [];
  const lc = new NodeLifecycle({
    log: quiet,
    state,
    cmdline: () => parseCmdline(cmdline),
    volumes: () => undefined,
    configText: () => undefined,
    requestSequence: (seq, reason) => void sequences.push(`${seq}: ${reason}`),
  });
  return { lc, state, sequences };
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

  it('refuses to wipe anything but STATE and EPHEMERAL; a reset of memory-backed volumes still powers off or reboots', async () => {
    const { lc, sequences } = lifecycle();
    await expect(lc.reset({ graceful: true, reboot: true, labels: ['BOOT'] }, 'a')).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, message: expect.stringMatching(/cannot wipe BOOT/) });
    await lc.reset({ graceful: true, reboot: false, labels: [] }, 'b');
    expect(sequences).toEqual(['shutdown: reset (STATE, EPHEMERAL)']);
    await lc.wipePending(); // nothing to wipe: no disk
  });

  it('an install names the missing disk', async () => {
    const { lc } = lifecycle();
    const err = await lc.install({ disk: '/dev/nonexistent-disk', wipe: false, image: '', extraKernelArgs: [] }, () => {}, new AbortController().signal).catch((e: unknown) => e);
    expect(err).toMatchObject({ message: expect.stringMatching(/\/dev\/nonexistent-disk: no such device/) });
    expect(statusOf(err)).toBe(grpc.status.INVALID_ARGUMENT);
  });
});
