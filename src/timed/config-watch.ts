// timed's input: the machine configuration as machined's validator typed it (ParsedMachineConfig),
// watched in machined's state. The time settings come from a TimeSyncConfig document when there
// is one, else from machine.time.
import type { TimeSyncConfig } from '../config/kinds.ts';
import type { Publisher } from '../daemon/publisher.ts';
import { watchMachineConfig, type MachineConfigView } from '../daemon/config-watch.ts';
import type { Logger } from '../lib/log.ts';
import type { TimeConfig } from './sync.ts';

export { MACHINE_CONFIG } from '../daemon/config-watch.ts';

export function timeConfigOf(spec: MachineConfigView | undefined): TimeConfig | undefined {
  if (!spec) return undefined;
  const kind = spec.documents.find((d): d is TimeSyncConfig => d.kind === 'TimeSyncConfig');
  if (kind) {
    return {
      disabled: kind.enabled === false,
      servers: kind.ntp?.servers ?? [],
      ...(kind.bootTimeout ? { bootTimeout: kind.bootTimeout } : {}),
    };
  }
  const t = spec.v1alpha1?.machine.time;
  if (!t) return {};
  return { ...(t.disabled !== undefined ? { disabled: t.disabled } : {}), ...(t.servers ? { servers: t.servers } : {}), ...(t.bootTimeout ? { bootTimeout: t.bootTimeout } : {}) };
}

/** Feeds `apply` with the time settings whenever the configuration changes, until aborted. */
export function watchTimeConfig(publisher: Publisher, apply: (c: TimeConfig | undefined) => void, log: Logger, signal: AbortSignal): Promise<void> {
  return watchMachineConfig(publisher, timeConfigOf, (c) => {
    log.info(`time configuration: ${JSON.stringify(c ?? null)}`);
    apply(c);
  }, log, signal);
}
