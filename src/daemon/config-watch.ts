// A daemon's view of the machine configuration: the validator's typed configuration (v1alpha1 and
// the kind documents), as machined publishes it for the daemons in the ParsedMachineConfig
// resource (config/ParsedMachineConfigs.config.bronze.dev/v1alpha1), watched through the daemon's
// Publisher. Its spec arrives as plain data (YAML over the wire) and is not validated again here:
// machined wrote it from the validator's output, and only machined writes it. So no daemon loads
// the validator (config/validate.ts, its schema, zod): issue 10, a daemon loads only what it uses.
// `select` picks the part the daemon cares about; `apply` is called when that part changes
// (undefined when the configuration goes away).
import { PARSED_MACHINE_CONFIG_ID, PARSED_MACHINE_CONFIG_NS, PARSED_MACHINE_CONFIG_TYPE, type ParsedMachineConfigSpec } from '../contract/resources/parsed-machine-config.ts';
import type { Logger } from '../lib/log.ts';
import type { Publisher } from './publisher.ts';

/** The resource a daemon watches for the machine configuration. */
export const MACHINE_CONFIG = { namespace: PARSED_MACHINE_CONFIG_NS, type: PARSED_MACHINE_CONFIG_TYPE, id: PARSED_MACHINE_CONFIG_ID } as const;

export type MachineConfigView = ParsedMachineConfigSpec;

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
      for await (const ev of publisher.watch<ParsedMachineConfigSpec>(MACHINE_CONFIG.namespace, MACHINE_CONFIG.type, signal)) {
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
