// What timed's loop decides by rule, apart from the loop itself (sync.ts): its inputs and
// options, which servers to ask (the configuration's, else DHCP's), and how long to wait before
// the next round after a success or a failure. Pure, and tested on its own.
import type { Publisher } from '../daemon/publisher.ts';
import type { Logger } from '../lib/log.ts';
import { goDurationMs } from '../lib/duration.ts';
import type { Clock, Correction } from './clock.ts';
import type { TimeStatusSpec } from '../contract/resources/time-status.ts';
import type { Sample } from './sntp.ts';

/** What timed knows of its sync: the TimeStatus it publishes (Talos's fields), and the last sync's details. */
export interface SyncStatus extends TimeStatusSpec {
  /** The offset measured at the last sync (ms; > 0: the clock was behind). */
  offsetMs?: number;
  /** The server of the last sync. */
  server?: string;
  /** When the last sync happened (RFC 3339, by the corrected clock). */
  lastSync?: string;
}

/** machine.time of the v1alpha1 config. */
export interface TimeConfig {
  /** Do not sync at all (TimeStatus says synced, syncDisabled). */
  disabled?: boolean;
  /** NTP servers: names or addresses, optionally with ':port'. */
  servers?: string[];
  /** How long the boot may wait for a first sync: ms, or a Go duration ('2m', '1m30s'). */
  bootTimeout?: number | string;
}

export interface TimeSyncOptions {
  clock: Clock;
  log: Logger;
  /** Where TimeStatus goes; none: only status() and waitSynced() tell. */
  publisher?: Publisher;
  /** Default 64 s. */
  minPollMs?: number;
  /** Default 1024 s. */
  maxPollMs?: number;
  /** First retry after a failed round; doubles up to maxPollMs. Default 2 s. */
  retryMs?: number;
  /** Queries per server per round. Default 3. */
  samples?: number;
  /** Between two queries to the same server. Default 2 s (public servers rate-limit faster clients). */
  sampleGapMs?: number;
  /** Per query. Default 2 s. */
  queryTimeoutMs?: number;
  /** Default 128 ms. */
  stepThresholdMs?: number;
  /** Threshold for the first correction: default 1 ms (at boot, step). */
  firstStepThresholdMs?: number;
  /** Synced turns false when no round succeeded for this long. Default 2 × maxPollMs. */
  maxSyncAgeMs?: number;
  /** Addresses of a server name; default dns.lookup (all). */
  resolve?: (host: string) => Promise<string[]>;
  /** Addresses used per server name. Default 3. */
  maxAddressesPerServer?: number;
  maxRootDistanceMs?: number;
  /**
   * Asked by a one-off check (`bronzectl time`) when neither the configuration nor DHCP names a
   * server: Talos's default. Default DEFAULT_TIME_SERVERS.
   */
  defaultServers?: readonly string[];
}

/** Talos's default NTP server (machine.time.servers when nothing else is known). */
export const DEFAULT_TIME_SERVERS: readonly string[] = ['time.cloudflare.com'];

export type RoundResult =
  | { ok: true; sample: Sample; correction: Correction | undefined; nextPollMs: number }
  | { ok: false; reason: string; nextPollMs: number | undefined };

/** Parses a Go duration ('1h2m3.5s', '300ms', '2m') or takes a number as ms; never negative. */
export function parseDuration(d: number | string): number {
  const ms = typeof d === 'number' ? d : /^[+-]/.test(d.trim()) ? undefined : goDurationMs(d.trim());
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) throw new Error(`bad duration ${JSON.stringify(d)}`);
  return ms;
}

/** The servers to use: the config's when it names any, else DHCP's. */
export function effectiveServers(cfg: TimeConfig | undefined, dhcp: readonly string[]): string[] {
  const fromConfig = (cfg?.servers ?? []).map((s) => s.trim()).filter(Boolean);
  if (fromConfig.length > 0) return fromConfig;
  return dhcp.map((s) => s.trim()).filter(Boolean);
}

/** The next interval after a successful round (pure; exported for tests). */
export function nextPollAfterSuccess(currentMs: number | undefined, correction: Correction | undefined, o: { minPollMs: number; maxPollMs: number; stepThresholdMs: number }): number {
  if (currentMs === undefined) return o.minPollMs;
  const stable = !correction || (correction.action === 'slew' && Math.abs(correction.offsetMs) < o.stepThresholdMs / 4);
  return stable ? Math.min(currentMs * 2, o.maxPollMs) : o.minPollMs;
}

/** The delay before retrying after `failures` failed rounds in a row (1, 2, ...). */
export function nextPollAfterFailure(failures: number, o: { retryMs: number; maxPollMs: number }): number {
  return Math.min(o.retryMs * 2 ** Math.min(Math.max(failures - 1, 0), 30), o.maxPollMs);
}
