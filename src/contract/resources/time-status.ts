// TimeStatuses.v1alpha1.talos.dev, id 'node': whether the clock is synchronised. timed writes
// it. Talos: pkg/machinery/resources/time/status.go. waitSynced waits for it to say synced.
import type { WatchEvent } from '../../state/state.ts';
import type { ResourceDefinition } from './definition.ts';

export interface TimeStatusSpec {
  /**
   * The clock agrees with a time server, confirmed within the last maxSyncAge; also true when
   * sync is disabled (the operator vouches for the clock), as in Talos.
   */
  synced: boolean;
  /** How many times timed has stepped the clock: consumers of wall time redo their work when it changes. */
  epoch: number;
  syncDisabled: boolean;
}

export const TIME_STATUS_TYPE = 'TimeStatuses.v1alpha1.talos.dev';
export const TIME_STATUS_NAMESPACE = 'runtime';
export const TIME_STATUS_ID = 'node';

export const timeStatusDefinition: ResourceDefinition<TimeStatusSpec> = {
  type: TIME_STATUS_TYPE,
  displayType: 'TimeStatus',
  aliases: [],
  defaultNamespace: TIME_STATUS_NAMESPACE,
  owner: 'timed',
  printColumns: [{ name: 'Synced', jsonPath: '{.synced}' }],
  proto: {
    message: 'talos.resource.definitions.time.StatusSpec',
  },
};

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
