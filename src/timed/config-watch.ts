// timed's input: the machine configuration, watched in machined's state. The time settings
// come from a TimeSyncConfig document when there is one, else from machine.time.
import type { Publisher } from '../daemon/publisher.ts';
import type { Logger } from '../lib/log.ts';
import type { TimeConfig } from './sync.ts';

export const MACHINE_CONFIG = { namespace: 'config', type: 'MachineConfigs.config.bronze.dev', id: 'v1alpha1' } as const;

export function timeConfigOf(spec: { v1alpha1?: Record<string, any>; documents?: Array<Record<string, any>> } | undefined): TimeConfig | undefined {
  if (!spec) return undefined;
  const kind = spec.documents?.find((d) => d.kind === 'TimeSyncConfig');
  if (kind) {
    return {
      disabled: kind.enabled === false,
      servers: (kind.ntp?.servers as string[] | undefined) ?? [],
      ...(kind.bootTimeout ? { bootTimeout: kind.bootTimeout } : {}),
    };
  }
  const t = spec.v1alpha1?.machine?.time;
  if (!t) return {};
  return { ...(t.disabled !== undefined ? { disabled: !!t.disabled } : {}), ...(t.servers ? { servers: t.servers } : {}), ...(t.bootTimeout ? { bootTimeout: t.bootTimeout } : {}) };
}

/** Feeds `apply` with the time settings whenever the configuration changes, until aborted. */
export async function watchTimeConfig(publisher: Publisher, apply: (c: TimeConfig | undefined) => void, log: Logger, signal: AbortSignal): Promise<void> {
  let last = '';
  while (!signal.aborted) {
    try {
      for await (const ev of publisher.watch<{ v1alpha1: Record<string, any>; documents: Array<Record<string, any>> }>(MACHINE_CONFIG.namespace, MACHINE_CONFIG.type, signal)) {
        if (ev.type === 'errored') throw ev.error;
        if (ev.type === 'bootstrapped') continue;
        if (ev.resource.metadata.id !== MACHINE_CONFIG.id) continue;
        const cfg = ev.type === 'destroyed' ? undefined : timeConfigOf(ev.resource.spec);
        const key = JSON.stringify(cfg ?? null);
        if (key === last) continue;
        last = key;
        log.info(`time configuration: ${key}`);
        apply(cfg);
      }
    } catch (err) {
      if (signal.aborted) return;
      log.warn(`watching the machine configuration: ${(err as Error).message}; retrying`);
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}
