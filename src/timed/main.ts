// timed: the SNTP client that steps and slews the clock. Serves health, Version and
// time.TimeService on its unix socket (/system/run/timed/timed.sock) and publishes TimeStatus.
//
// Wiring (startTimed): a Clock, a Publisher for TimeStatus, and the inputs (TimeSync.setConfig
// with machine.time, TimeSync.setDhcpServers with the lease's NTP servers). Until machined
// hands daemons a remote Publisher and their inputs, main() reads the time config from
// BRONZE_TIME_CONFIG (JSON TimeConfig) and keeps the status to itself.
import fs from 'node:fs';
import { StderrLogger, type Logger } from '../lib/log.ts';
import { initNative } from '../lib/native.ts';
import { isSea } from '../lib/self.ts';
import { runDaemon, serveDaemon, type DaemonServer } from '../daemon/serve.ts';
import type { Publisher } from '../daemon/publisher.ts';
import { RemotePublisher } from '../daemon/remote-publisher.ts';
import { watchTimeConfig } from './config-watch.ts';
import { type Clock, RealClock } from './clock.ts';
import { timeService } from './api.ts';
import { type TimeConfig, TimeSync, type TimeSyncOptions } from './sync.ts';

/**
 * Whether this process may change the machine's clock: BRONZE_TIMED_CLOCK=adjust|readonly
 * decides when set; otherwise only on a Bronze node, i.e. this is the single executable and
 * its parent is PID 1 running the same binary (machined). Host runs and tests never adjust.
 */
export function mayAdjustClock(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.BRONZE_TIMED_CLOCK;
  if (v === 'adjust') return true;
  if (v === 'readonly') return false;
  if (v !== undefined && v !== '') throw new Error(`BRONZE_TIMED_CLOCK must be "adjust" or "readonly", not ${JSON.stringify(v)}`);
  if (!isSea() || process.ppid !== 1) return false;
  try {
    return fs.realpathSync('/proc/1/exe') === fs.realpathSync(process.execPath);
  } catch {
    return false;
  }
}

/** BRONZE_TIME_CONFIG: a JSON TimeConfig (interim input until config reaches daemons as a resource). */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): TimeConfig | undefined {
  const raw = env.BRONZE_TIME_CONFIG;
  if (!raw) return undefined;
  const v = JSON.parse(raw) as unknown;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('BRONZE_TIME_CONFIG must be a JSON object');
  const c = v as Record<string, unknown>;
  for (const k of Object.keys(c)) if (!['disabled', 'servers', 'bootTimeout'].includes(k)) throw new Error(`BRONZE_TIME_CONFIG: unknown field ${k}`);
  if (c.disabled !== undefined && typeof c.disabled !== 'boolean') throw new Error('BRONZE_TIME_CONFIG.disabled must be a boolean');
  if (c.servers !== undefined && !(Array.isArray(c.servers) && c.servers.every((s) => typeof s === 'string'))) {
    throw new Error('BRONZE_TIME_CONFIG.servers must be a list of strings');
  }
  if (c.bootTimeout !== undefined && typeof c.bootTimeout !== 'string' && typeof c.bootTimeout !== 'number') {
    throw new Error('BRONZE_TIME_CONFIG.bootTimeout must be a duration');
  }
  return c as TimeConfig;
}

export interface TimedDeps {
  log: Logger;
  clock: Clock;
  publisher?: Publisher;
  config?: TimeConfig;
  /** Test knobs (poll intervals, timeouts). */
  sync?: Partial<Omit<TimeSyncOptions, 'clock' | 'log' | 'publisher'>>;
}

export interface Timed {
  sync: TimeSync;
  server: DaemonServer;
  stop(): Promise<void>;
}

/** Starts the sync loop and the daemon's gRPC server (health, Version, time.TimeService). */
export async function startTimed(deps: TimedDeps): Promise<Timed> {
  const sync = new TimeSync({ ...deps.sync, clock: deps.clock, log: deps.log, ...(deps.publisher ? { publisher: deps.publisher } : {}) });
  sync.setConfig(deps.config);
  const server = await serveDaemon('timed', deps.log, [{ service: 'time.TimeService', impl: timeService(sync) }]);
  sync.start();
  return {
    sync,
    server,
    stop: async () => {
      await sync.stop();
      await server.close();
    },
  };
}

export async function main(): Promise<void> {
  const log = new StderrLogger('timed');
  await initNative();
  const adjust = mayAdjustClock();
  const clock = new RealClock({ adjust });
  if (!adjust) log.info('not on a node: measuring time only, the clock is left alone');
  const config = configFromEnv();
  const publisher = new RemotePublisher('timed');
  await runDaemon('timed', log, async () => {
    const timed = await startTimed({ log, clock, publisher, ...(config ? { config } : {}) });
    // The machine configuration (unless the environment pinned one for a host run).
    if (!config) void watchTimeConfig(publisher, (c) => timed.sync.setConfig(c), log, new AbortController().signal);
    return timed.server;
  });
}
