import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../lib/log.ts';
import { ControllerRuntime } from '../../state/controller.ts';
import { MemoryState } from '../../state/memory.ts';
import { newResource } from '../../state/resource.ts';
import { MACHINE_CONFIG_ID, MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE } from '../../contract/resources/machine-config.ts';
import { machineConfigSpecOf } from '../../config/testing.ts';
import { kernelParamController, procSys } from './sysctls.ts';
import { DEFAULT_SYSCTLS } from './sysctl-defaults.ts';

const until = async (fn: () => Promise<boolean> | boolean) => {
  for (let i = 0; i < 100; i++) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('condition not reached');
};

describe('default sysctls', () => {
  let runtime: ControllerRuntime | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await runtime?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('hardens the BPF JIT, as Talos does', () => {
    expect(DEFAULT_SYSCTLS['net.core.bpf_jit_harden']).toBe('2');
    expect(DEFAULT_SYSCTLS['kernel.unprivileged_bpf_disabled']).toBe('1');
  });

  it('are set at boot without a configuration, and the configuration wins on a key', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-sysctl-defaults-'));
    fs.mkdirSync(path.join(dir, 'net/core'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'net/core/bpf_jit_harden'), '0\n');
    fs.mkdirSync(path.join(dir, 'kernel'));
    fs.writeFileSync(path.join(dir, 'kernel/unprivileged_bpf_disabled'), '2\n');
    const file = (k: string) => fs.readFileSync(path.join(dir!, k), 'utf8');
    const state = new MemoryState();
    runtime = new ControllerRuntime(state, { log: silentLogger });
    runtime.register(kernelParamController(procSys(dir), DEFAULT_SYSCTLS));
    runtime.start();
    await until(() => file('net/core/bpf_jit_harden') === '2' && file('kernel/unprivileged_bpf_disabled') === '1');
    await until(async () => (await state.list('runtime', 'KernelParamStatuses.runtime.talos.dev')).length === 2);
    expect((await state.get('runtime', 'KernelParamStatuses.runtime.talos.dev', 'net.core.bpf_jit_harden')).spec).toEqual({ current: '2', default: '0', unsupported: false });

    const spec = machineConfigSpecOf(YAML.parse('version: v1alpha1\nmachine:\n  sysctls:\n    net.core.bpf_jit_harden: "1"\n'), []);
    await state.create(newResource(MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID, spec), { owner: 'machined' });
    await until(() => file('net/core/bpf_jit_harden') === '1');
    expect(file('kernel/unprivileged_bpf_disabled')).toBe('1');
  });
});
