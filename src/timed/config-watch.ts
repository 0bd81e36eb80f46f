// timed's input: the machine configuration as machined's validator typed it (ParsedMachineConfig),
// watched in machined's state. The time settings come from a TimeSyncConfig document when there
// is one, else from machine.time, as the configuration's accessors resolve them.
import { timeSync } from '../config/accessors/time.ts';
import type { Publisher } from '../daemon/publisher.ts';
import { watchMachineConfig, type MachineConfigView } from '../daemon/config-watch.ts';
import type { Logger } from '../lib/log.ts';
import type { TimeConfig } from './sync.ts';

export { MACHINE_CONFIG } from '../daemon/config-watch.ts';

/** The time settings: a TimeSyncConfig document when there is one, else machine.time (config/accessors/time.ts). */
export function timeConfigOf(spec: MachineConfigView | undefined): TimeConfig | undefined {
  return timeSync(spec);
}

/** Feeds `apply` with the time settings whenever the configuration changes, until aborted. */
export function watchTimeConfig(publisher: Publisher, apply: (c: TimeConfig | undefined) => void, log: Logger, signal: AbortSignal): Promise<void> {
  return watchMachineConfig(publisher, timeConfigOf, (c) => {
    log.info(`time configuration: ${JSON.stringify(c ?? null)}`);
    apply(c);
  }, log, signal);
}
