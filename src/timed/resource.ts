// The TimeStatus resource timed publishes (Talos: TimeStatuses.runtime.talos.dev, id 'node',
// shown by `talosctl get timestatus`), its definition, and waitSynced for other processes.
//
// This file imports nothing from timed's internals, so machined, the CLI and other daemons can
// import it (it belongs with the contract layer's definitions).
import type { ResourceDefinition } from '../state/definitions.ts';
import type { WatchEvent } from '../state/state.ts';

export const TIME_STATUS_TYPE = 'TimeStatuses.runtime.bronze.dev';
export const TIME_STATUS_NAMESPACE = 'runtime';
export const TIME_STATUS_ID = 'node';

export interface TimeStatusSpec {
  /**
   * The clock agrees with a time server, confirmed within the last maxSyncAge; also true when
   * sync is disabled (the operator vouches for the clock), as in Talos.
   */
  synced: boolean;
  /** How many times timed has stepped the clock: consumers of wall time redo their work when it changes. */
  epoch: number;
  syncDisabled: boolean;
  /** The offset measured at the last sync (ms; > 0: the clock was behind). */
  offsetMs?: number;
  /** The server of the last sync. */
  server?: string;
  /** When the last sync happened (RFC 3339, by the corrected clock). */
  lastSync?: string;
}

export const timeStatusDefinition: ResourceDefinition = {
  type: TIME_STATUS_TYPE,
  displayType: 'TimeStatus',
  aliases: ['timestatus', 'timestatuses'],
  defaultNamespace: TIME_STATUS_NAMESPACE,
  printColumns: [
    { name: 'Synced', jsonPath: '{.synced}' },
    { name: 'Epoch', jsonPath: '{.epoch}' },
    { name: 'Sync Disabled', jsonPath: '{.syncDisabled}' },
    { name: 'Offset ms', jsonPath: '{.offsetMs}' },
    { name: 'Server', jsonPath: '{.server}' },
  ],
};

/** What timed adds to the registry (machined registers it with registerDefinitions). */
export const timeDefinitions: readonly ResourceDefinition[] = [timeStatusDefinition];

/** The part of a Publisher (or of a State reached another way) waitSynced needs. */
export interface TimeStatusSource {
  watch<S = unknown>(namespace: string, type: string, signal: AbortSignal): AsyncIterable<WatchEvent<S>>;
}

/**
 * Resolves true as soon as the TimeStatus says synced, false when timeoutMs passes first (or
 * the signal aborts). For other services: e.g. machined's boot sequence waits bootTimeout.
 */
export async function waitSynced(source: TimeStatusSource, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const onAbort = () => ac.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (signal?.aborted) return false;
    for await (const ev of source.watch<TimeStatusSpec>(TIME_STATUS_NAMESPACE, TIME_STATUS_TYPE, ac.signal)) {
      if ((ev.type === 'created' || ev.type === 'updated') && ev.resource.metadata.id === TIME_STATUS_ID && ev.resource.spec.synced) return true;
      if (ev.type === 'errored') {
        if (ac.signal.aborted) return false;
        throw ev.error;
      }
    }
    return false;
  } catch (err) {
    if (ac.signal.aborted) return false;
    throw err;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    ac.abort();
  }
}
