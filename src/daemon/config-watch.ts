// A daemon's view of the machine configuration: the MachineConfig resource in machined's state
// (config/MachineConfigs.config.talos.dev/v1alpha1, spec { v1alpha1, documents }), watched
// through the daemon's Publisher. `select` picks the part the daemon cares about; `apply` is
// called when that part changes (undefined when the configuration goes away).
import { MACHINE_CONFIG_ID, MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, type MachineConfigSpec } from '../contract/resources/machine-config.ts';
import type { Logger } from '../lib/log.ts';
import type { Publisher } from './publisher.ts';

export const MACHINE_CONFIG = { namespace: MACHINE_CONFIG_NS, type: MACHINE_CONFIG_TYPE, id: MACHINE_CONFIG_ID } as const;

export type MachineConfigView = MachineConfigSpec;

export async function watchMachineConfig<T>(
  publisher: Publisher,
  select: (spec: MachineConfigView | undefined) => T,
  apply: (part: T) => void | Promise<void>,
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  let last: string | undefined;
  while (!signal.aborted) {
    try {
      for await (const ev of publisher.watch<MachineConfigView>(MACHINE_CONFIG.namespace, MACHINE_CONFIG.type, signal)) {
        if (ev.type === 'errored') throw ev.error;
        if (ev.type === 'bootstrapped' || ev.resource.metadata.id !== MACHINE_CONFIG.id) continue;
        const part = select(ev.type === 'destroyed' ? undefined : ev.resource.spec);
        const key = JSON.stringify(part ?? null);
        if (key === last) continue;
        last = key;
        await apply(part);
      }
    } catch (err) {
      if (signal.aborted) return;
      log.warn(`watching the machine configuration: ${(err as Error).message}; retrying`);
    }
    if (!signal.aborted) await new Promise((r) => setTimeout(r, 2000));
  }
}
