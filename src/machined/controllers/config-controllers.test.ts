import { silentLogger } from '../../lib/log.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ControllerRuntime } from '../../state/controller.ts';
import { MemoryState } from '../../state/memory.ts';
import { newResource } from '../../state/resource.ts';
import { MACHINE_CONFIG_ID, MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE } from '../../contract/resources/machine-config.ts';
import { machineConfigSpecOf, type DocumentPart } from '../../config/testing.ts';
import YAML from 'yaml';
import { kernelParamController, procSys } from './sysctls.ts';
import { filesController } from './files.ts';
import { envController } from './env.ts';
import { baseServiceEnv, daemonEnv, serviceSpecs } from '../services.ts';

const quiet = silentLogger;
const until = async (fn: () => Promise<boolean> | boolean) => {
  for (let i = 0; i < 100; i++) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('condition not reached');
};

/** Services whose environments are `envs`; a changed one counts as a restart, as the supervisor does. */
function envTarget(envs: Map<string, Record<string, string>>) {
  const restarted: string[] = [];
  const target = {
    list: () => [...envs.keys()].map((id) => ({ id })),
    setServiceEnv: async (id: string, env: Record<string, string>) => {
      if (JSON.stringify(envs.get(id)) === JSON.stringify(env)) return false;
      envs.set(id, env);
      restarted.push(id);
      return true;
    },
  };
  return { target, restarted };
}

describe('config controllers', () => {
  let runtime: ControllerRuntime | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await runtime?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function publish(state: MemoryState, text: string, documents: DocumentPart[] = []) {
    // The controllers read the published spec; these partial configurations are not whole ones.
    const spec = machineConfigSpecOf(YAML.parse(text), documents);
    const existing = await state.get(MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID).catch(() => undefined);
    if (existing) await state.update({ ...existing, spec }, { owner: 'machined' });
    else await state.create(newResource(MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID, spec), { owner: 'machined' });
  }

  it('sets sysctls from the configuration, publishes them, and restores a removed one', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-sysctl-'));
    fs.mkdirSync(path.join(dir, 'net/ipv4'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'net/ipv4/ip_forward'), '0\n');
    fs.mkdirSync(path.join(dir, 'vm'));
    fs.writeFileSync(path.join(dir, 'vm/swappiness'), '60\n');
    const state = new MemoryState();
    runtime = new ControllerRuntime(state, { log: quiet });
    runtime.register(kernelParamController(procSys(dir)));
    runtime.start();
    await publish(state, 'version: v1alpha1\nmachine:\n  sysctls:\n    net.ipv4.ip_forward: "1"\n    vm.swappiness: "10"\n');
    await until(() => fs.readFileSync(path.join(dir!, 'vm/swappiness'), 'utf8') === '10');
    expect(fs.readFileSync(path.join(dir, 'net/ipv4/ip_forward'), 'utf8')).toBe('1');
    await until(async () => (await state.list('runtime', 'KernelParamStatuses.runtime.talos.dev')).length === 2);
    expect((await state.get('runtime', 'KernelParamStatuses.runtime.talos.dev', 'vm.swappiness')).spec).toEqual({ current: '10', default: '60', unsupported: false });
    await publish(state, 'version: v1alpha1\nmachine:\n  sysctls:\n    net.ipv4.ip_forward: "1"\n');
    await until(() => fs.readFileSync(path.join(dir!, 'vm/swappiness'), 'utf8') === '60');
    await until(async () => (await state.list('runtime', 'KernelParamStatuses.runtime.talos.dev')).length === 1);
  });

  it('merges SysctlConfig documents over machine.sysctls, and writes slashed keys as paths', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-sysctl-'));
    fs.mkdirSync(path.join(dir, 'vm'));
    fs.writeFileSync(path.join(dir, 'vm/swappiness'), '60\n');
    fs.mkdirSync(path.join(dir, 'net/ipv6/conf/eth0.100'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'net/ipv6/conf/eth0.100/disable_ipv6'), '0\n');
    const state = new MemoryState();
    runtime = new ControllerRuntime(state, { log: quiet });
    runtime.register(kernelParamController(procSys(dir)));
    runtime.start();
    await publish(state, 'version: v1alpha1\nmachine:\n  sysctls:\n    vm.swappiness: "10"\n', [
      { apiVersion: 'v1alpha1', kind: 'SysctlConfig', params: { 'vm.swappiness': '20', 'net/ipv6/conf/eth0.100/disable_ipv6': '1' } },
    ]);
    await until(() => fs.readFileSync(path.join(dir!, 'vm/swappiness'), 'utf8') === '20');
    await until(() => fs.readFileSync(path.join(dir!, 'net/ipv6/conf/eth0.100/disable_ipv6'), 'utf8') === '1');
  });

  it('writes machine.files: create once, overwrite, append once, with permissions', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-files-'));
    fs.mkdirSync(path.join(dir, 'var/etc'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'var/etc/existing'), 'old\n');
    const state = new MemoryState();
    runtime = new ControllerRuntime(state, { log: quiet });
    runtime.register(filesController(dir));
    runtime.start();
    const files = [
      { path: '/var/etc/new.conf', content: 'a=1\n', permissions: 0o600, op: 'create' },
      { path: '/var/etc/existing', content: 'kept?\n', op: 'create' },
      { path: '/var/etc/over', content: 'o\n', op: 'overwrite' },
      { path: '/var/etc/log', content: 'line\n', op: 'append' },
    ];
    await publish(state, `version: v1alpha1\nmachine:\n  files: ${JSON.stringify(files)}\n`);
    await until(() => fs.existsSync(path.join(dir!, 'var/etc/log')));
    expect(fs.readFileSync(path.join(dir, 'var/etc/new.conf'), 'utf8')).toBe('a=1\n');
    expect(fs.statSync(path.join(dir, 'var/etc/new.conf')).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(path.join(dir, 'var/etc/existing'), 'utf8')).toBe('old\n');
    await publish(state, `version: v1alpha1\ndebug: true\nmachine:\n  files: ${JSON.stringify(files)}\n`);
    await new Promise((r) => setTimeout(r, 200));
    expect(fs.readFileSync(path.join(dir, 'var/etc/log'), 'utf8')).toBe('line\n');
  });

  it('gives services machine.env and restarts the ones whose environment changed', async () => {
    const state = new MemoryState();
    const envs = new Map<string, Record<string, string>>([['a', { BASE: '1' }]]);
    const { target, restarted } = envTarget(envs);
    runtime = new ControllerRuntime(state, { log: quiet });
    runtime.register(envController(target, { BASE: '1' }));
    runtime.start();
    await publish(state, 'version: v1alpha1\nmachine:\n  env:\n    https_proxy: http://proxy:3128\n');
    await until(() => restarted.length === 1);
    expect(envs.get('a')).toEqual({ BASE: '1', https_proxy: 'http://proxy:3128' });
    // EnvironmentConfig documents over machine.env, the last one winning.
    await publish(state, 'version: v1alpha1\nmachine:\n  env:\n    https_proxy: http://proxy:3128\n', [
      { apiVersion: 'v1alpha1', kind: 'EnvironmentConfig', variables: { https_proxy: 'http://a:1', NO_PROXY: 'x' } },
      { apiVersion: 'v1alpha1', kind: 'EnvironmentConfig', variables: { https_proxy: 'http://b:2' } },
    ]);
    await until(() => restarted.length === 2);
    expect(envs.get('a')).toEqual({ BASE: '1', https_proxy: 'http://b:2', NO_PROXY: 'x' });
  });

  it('restarts no daemon for a configuration without machine.env: their own V8 flags are part of their environment', async () => {
    const state = new MemoryState();
    const base = baseServiceEnv({ UV_THREADPOOL_SIZE: '4' });
    const specs = serviceSpecs({ UV_THREADPOOL_SIZE: '4' });
    const envs = new Map(specs.map((s) => [s.id, s.env!]));
    const { target, restarted } = envTarget(envs);
    runtime = new ControllerRuntime(state, { log: quiet });
    runtime.register(envController(target, base, daemonEnv));
    runtime.start();
    await publish(state, 'version: v1alpha1\nmachine:\n  sysctls:\n    vm.swappiness: "10"\n');
    await new Promise((r) => setTimeout(r, 300));
    expect(restarted).toEqual([]);
    await publish(state, 'version: v1alpha1\nmachine:\n  env:\n    TZ: UTC\n');
    await until(() => restarted.length === specs.length);
    expect(envs.get('udevd')!.NODE_OPTIONS).toContain('--v8-pool-size=1');
    expect(envs.get('udevd')!.TZ).toBe('UTC');
  });
});
