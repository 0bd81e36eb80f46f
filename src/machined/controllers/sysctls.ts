// KernelParamController: makes the kernel parameters (machine.sysctls) what the configuration
// says, and publishes each as runtime/KernelParamStatuses.runtime.talos.dev. A parameter
// dropped from the configuration gets back the value it had before Bronze first set it.
import fs from 'node:fs';
import path from 'node:path';
import type { Controller } from '../../state/controller.ts';
import { kernelParamStatusDefinition as kernelParamDefinition, type KernelParamStatusSpec } from '../../contract/resources/kernel-param-status.ts';
import { MACHINE_CONFIG_ID, MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, type MachineConfigSpec } from '../../contract/resources/machine-config.ts';
import { sysctls } from '../../config/accessors/machine.ts';

export interface KernelParams {
  read(key: string): string | undefined;
  write(key: string, value: string): void;
}

/** /proc/sys, with `net.ipv4.ip_forward` → net/ipv4/ip_forward and `net/ipv6/conf/eth0.100/x` as it is. */
export function procSys(root = '/proc/sys'): KernelParams {
  // A slashed key (net/ipv6/conf/eth0.100/disable_ipv6) is a path already: its segments may hold dots.
  const file = (key: string) => path.join(root, ...(key.includes('/') ? key.split('/') : key.split('.')));
  return {
    read: (key) => {
      try {
        return fs.readFileSync(file(key), 'utf8').trim();
      } catch {
        return undefined;
      }
    },
    write: (key, value) => fs.writeFileSync(file(key), value),
  };
}

/** `bronzeDefaults`: set whatever the configuration says (sysctl-defaults.ts); the configuration wins on a key. */
export function kernelParamController(params: KernelParams, bronzeDefaults: Readonly<Record<string, string>> = {}): Controller {
  const defaults = new Map<string, string | undefined>();
  return {
    name: 'KernelParamController',
    inputs: [{ namespace: MACHINE_CONFIG_NS, type: MACHINE_CONFIG_TYPE, kind: 'weak' }],
    outputs: [{ type: kernelParamDefinition.type, kind: 'exclusive' }],
    async run(ctx) {
      const cfg = await ctx.state.find<MachineConfigSpec>(MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID);
      // machine.sysctls with Talos's SysctlConfig documents over them (the document wins on a key).
      const want = { ...bronzeDefaults, ...sysctls(cfg?.spec) };
      for (const [key, value] of Object.entries(want)) {
        if (!defaults.has(key)) defaults.set(key, params.read(key));
        const before = params.read(key);
        let unsupported = false;
        try {
          if (before !== value) params.write(key, value);
        } catch (err) {
          unsupported = before === undefined;
          ctx.log.warn(`sysctl ${key}=${value}: ${(err as Error).message}`);
        }
        if (before !== value && !unsupported) ctx.log.info(`sysctl ${key}: ${before ?? '?'} → ${value}`);
        const spec: KernelParamStatusSpec = { current: params.read(key) ?? '', default: defaults.get(key) ?? '', unsupported };
        await ctx.state.apply('runtime', kernelParamDefinition.type, key, spec);
      }
      for (const r of await ctx.state.list('runtime', kernelParamDefinition.type)) {
        const key = r.metadata.id;
        if (key in want) continue;
        const original = defaults.get(key);
        if (original !== undefined) {
          try {
            params.write(key, original);
            ctx.log.info(`sysctl ${key}: restored to ${original}`);
          } catch (err) {
            ctx.log.warn(`sysctl ${key}: restoring ${original}: ${(err as Error).message}`);
          }
        }
        defaults.delete(key);
        await ctx.state.destroy('runtime', kernelParamDefinition.type, key);
      }
    },
  };
}
