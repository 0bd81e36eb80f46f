// TimeSync: the loop that keeps the clock. Each round queries every server (a burst of a few
// samples each, the minimum-delay sample kept), picks the best server, and steps or slews the
// clock. The poll interval starts at minPoll, doubles while the clock stays within a quarter
// of the step threshold, up to maxPoll; failed rounds retry after retryMs, doubling up to
// maxPoll. Kiss-o'-death: RATE holds the server off for twice the interval, DENY and RSTR
// until the server list changes.
//
// Inputs: the time config (setConfig), the servers DHCP offered (setDhcpServers). Servers come
// from the config when it names any, else from DHCP, else there are none and nothing is synced.
// Output: the TimeStatus resource, through the Publisher it is given.
import dns from 'node:dns';
import net from 'node:net';
import type { Publisher } from '../daemon/publisher.ts';
import type { Logger } from '../lib/log.ts';
import { type Correction, DEFAULT_STEP_THRESHOLD_MS, decideCorrection } from './clock.ts';
import { DEFAULT_TIME_SERVERS, type RoundResult, type SyncStatus, type TimeConfig, type TimeSyncOptions, effectiveServers, nextPollAfterFailure, nextPollAfterSuccess, parseDuration } from './policy.ts';
import { TIME_STATUS_ID, TIME_STATUS_NAMESPACE, TIME_STATUS_TYPE, type TimeStatusSpec } from '../contract/resources/time-status.ts';
import { KissOfDeathError, type Sample, SntpError, minDelaySample, parseServer, query, selectBest } from './sntp.ts';

export { DEFAULT_TIME_SERVERS, effectiveServers, nextPollAfterFailure, nextPollAfterSuccess, parseDuration, type RoundResult, type SyncStatus, type TimeConfig, type TimeSyncOptions } from './policy.ts';

interface Holdoff {
  untilMono: number;
  reason: string;
}

const mono = () => performance.now();

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export class TimeSync {
  readonly #o: Required<Omit<TimeSyncOptions, 'publisher' | 'maxRootDistanceMs'>> & Pick<TimeSyncOptions, 'publisher' | 'maxRootDistanceMs'>;
  #config: TimeConfig | undefined;
  #dhcp: string[] = [];
  #running = false;
  #timer: NodeJS.Timeout | undefined;
  #staleTimer: NodeJS.Timeout | undefined;
  #bootTimer: NodeJS.Timeout | undefined;
  #round: Promise<RoundResult> | undefined;
  #roundAbort: AbortController | undefined;
  #rerun = false;
  #pollMs: number | undefined;
  #failures = 0;
  #corrected = false;
  #epoch = 0;
  #lastSyncMono: number | undefined;
  #holdoffs = new Map<string, Holdoff>();
  #status: SyncStatus = { synced: false, epoch: 0, syncDisabled: false };
  #listeners = new Set<(s: SyncStatus) => void>();
  #publishing: Promise<void> = Promise.resolve();
  #publishRetry: NodeJS.Timeout | undefined;
  #warnedReadOnly = false;

  constructor(o: TimeSyncOptions) {
    const maxPollMs = o.maxPollMs ?? 1_024_000;
    this.#o = {
      clock: o.clock,
      log: o.log,
      publisher: o.publisher,
      minPollMs: o.minPollMs ?? 64_000,
      maxPollMs,
      retryMs: o.retryMs ?? 2000,
      samples: Math.max(1, o.samples ?? 3),
      sampleGapMs: o.sampleGapMs ?? 2000,
      queryTimeoutMs: o.queryTimeoutMs ?? 2000,
      stepThresholdMs: o.stepThresholdMs ?? DEFAULT_STEP_THRESHOLD_MS,
      firstStepThresholdMs: o.firstStepThresholdMs ?? 1,
      maxSyncAgeMs: o.maxSyncAgeMs ?? 2 * maxPollMs,
      resolve: o.resolve ?? defaultResolve,
      maxAddressesPerServer: o.maxAddressesPerServer ?? 3,
      maxRootDistanceMs: o.maxRootDistanceMs,
      defaultServers: o.defaultServers ?? DEFAULT_TIME_SERVERS,
    };
  }

  // ---- inputs ------------------------------------------------------------------------------

  /** The machine.time config (undefined: none, i.e. DHCP's servers). Takes effect at once. */
  setConfig(cfg: TimeConfig | undefined): void {
    if (cfg?.bootTimeout !== undefined) parseDuration(cfg.bootTimeout); // reject a bad value before taking any of it
    const before = this.#inputsKey();
    this.#config = cfg ? { ...cfg, servers: cfg.servers ? [...cfg.servers] : undefined } : undefined;
    this.#inputsChanged(before);
  }

  /** The NTP servers the DHCP lease offered (option 42), [] when none or the lease is gone. */
  setDhcpServers(servers: readonly string[]): void {
    const before = this.#inputsKey();
    this.#dhcp = [...servers];
    this.#inputsChanged(before);
  }

  /** config.bootTimeout in ms, if set: how long the boot should wait for the first sync. */
  get bootTimeoutMs(): number | undefined {
    const b = this.#config?.bootTimeout;
    return b === undefined ? undefined : parseDuration(b);
  }

  get servers(): string[] {
    return effectiveServers(this.#config, this.#dhcp);
  }

  get disabled(): boolean {
    return this.#config?.disabled === true;
  }

  #inputsKey(): string {
    return JSON.stringify({ d: this.disabled, s: this.servers });
  }

  #inputsChanged(before: string): void {
    if (this.#inputsKey() === before) return;
    this.#holdoffs.clear();
    this.#failures = 0;
    this.#pollMs = undefined;
    if (this.disabled) this.#o.log.info('time sync disabled by config');
    else this.#o.log.info(`NTP servers: ${this.servers.join(', ') || '(none)'}`);
    if (this.#running) this.#kick();
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  /** Publishes the initial status and runs the first round at once. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#publish(); // the initial status: not synced yet
    const boot = this.bootTimeoutMs;
    if (boot !== undefined) {
      this.#bootTimer = setTimeout(() => {
        if (!this.#status.synced) this.#o.log.warn(`time not synchronised within the boot timeout (${boot} ms); still trying in the background`);
      }, boot);
      this.#bootTimer.unref();
    }
    this.#kick();
  }

  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#timer);
    clearTimeout(this.#staleTimer);
    clearTimeout(this.#bootTimer);
    clearTimeout(this.#publishRetry);
    this.#roundAbort?.abort();
    await this.#round?.catch(() => undefined);
    await this.#publishing;
  }

  /** Runs a round now (or waits for the one running, then runs another) and returns its result. */
  async syncNow(): Promise<RoundResult> {
    while (this.#round) {
      await this.#round.catch(() => undefined);
    }
    return this.#startRound();
  }

  #kick(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#round) {
      this.#rerun = true;
      return;
    }
    void this.#startRound();
  }

  #schedule(ms: number): void {
    clearTimeout(this.#timer);
    if (!this.#running) return;
    this.#timer = setTimeout(() => this.#kick(), ms);
    this.#timer.unref();
  }

  #startRound(): Promise<RoundResult> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const ac = new AbortController();
    this.#roundAbort = ac;
    const p = this.#runRound(ac.signal).catch((err: unknown): RoundResult => {
      this.#o.log.error(`sync round failed: ${(err as Error).message}`);
      return { ok: false, reason: (err as Error).message, nextPollMs: this.#o.retryMs };
    });
    this.#round = p;
    void p.then((r) => {
      this.#round = undefined;
      this.#roundAbort = undefined;
      if (!this.#running) return;
      if (this.#rerun) {
        this.#rerun = false;
        this.#kick();
      } else if (r.nextPollMs !== undefined) this.#schedule(r.nextPollMs);
    });
    return p;
  }

  // ---- status ------------------------------------------------------------------------------

  status(): SyncStatus {
    return { ...this.#status };
  }

  /** Calls fn on every status change until the returned function is called. */
  onStatus(fn: (s: SyncStatus) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** True as soon as the status is synced; false when timeoutMs passes first. */
  waitSynced(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.#status.synced) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (v: boolean) => {
        clearTimeout(timer);
        off();
        signal?.removeEventListener('abort', onAbort);
        resolve(v);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      const off = this.onStatus((s) => {
        if (s.synced) done(true);
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #setStatus(next: SyncStatus): void {
    const clean = Object.fromEntries(Object.entries(next).filter(([, v]) => v !== undefined)) as unknown as SyncStatus;
    if (JSON.stringify(clean) === JSON.stringify(this.#status)) return;
    this.#status = clean;
    for (const fn of this.#listeners) fn({ ...clean });
    this.#publish();
  }

  #publish(): void {
    const pub = this.#o.publisher;
    if (!pub) return;
    clearTimeout(this.#publishRetry);
    this.#publishing = this.#publishing.then(async () => {
      try {
        const { synced, epoch, syncDisabled } = this.#status;
        const spec: TimeStatusSpec = { synced, epoch, syncDisabled };
        await pub.apply(TIME_STATUS_NAMESPACE, TIME_STATUS_TYPE, TIME_STATUS_ID, spec);
      } catch (err) {
        this.#o.log.warn(`publishing TimeStatus: ${(err as Error).message}; retrying in 5 s`);
        if (this.#running) {
          this.#publishRetry = setTimeout(() => this.#publish(), 5000);
          this.#publishRetry.unref();
        }
      }
    });
  }

  /** Arms the timer that turns synced false once the last sync is maxSyncAge old. */
  #watchStaleness(): void {
    clearTimeout(this.#staleTimer);
    if (this.#lastSyncMono === undefined) return;
    const left = this.#lastSyncMono + this.#o.maxSyncAgeMs - mono();
    if (left > 0) {
      this.#staleTimer = setTimeout(() => this.#watchStaleness(), left + 1);
      this.#staleTimer.unref();
      return;
    }
    if (this.disabled || !this.#status.synced) return;
    this.#o.log.warn(`time not confirmed by any server for ${Math.round(this.#o.maxSyncAgeMs / 1000)} s: not synced`);
    this.#setStatus({ ...this.#status, synced: false });
  }

  // ---- one round ---------------------------------------------------------------------------

  async #runRound(signal: AbortSignal): Promise<RoundResult> {
    if (this.disabled) {
      clearTimeout(this.#staleTimer);
      this.#setStatus({ synced: true, epoch: this.#epoch, syncDisabled: true });
      return { ok: false, reason: 'sync disabled', nextPollMs: undefined };
    }
    if (this.#status.syncDisabled) {
      // Enabled again: nothing vouches for the clock until a server does.
      this.#lastSyncMono = undefined;
      this.#setStatus({ synced: false, epoch: this.#epoch, syncDisabled: false });
    }
    const servers = this.servers;
    if (servers.length === 0) {
      if (this.#lastSyncMono === undefined) this.#setStatus({ synced: false, epoch: this.#epoch, syncDisabled: false });
      return { ok: false, reason: 'no NTP servers', nextPollMs: undefined };
    }
    const now = mono();
    const usable = servers.filter((s) => {
      const h = this.#holdoffs.get(s);
      return !h || h.untilMono <= now;
    });
    const problems: string[] = [];
    for (const s of servers) if (!usable.includes(s)) problems.push(`${s}: held off (${this.#holdoffs.get(s)!.reason})`);
    const samples = (await Promise.all(usable.map((s) => this.#sampleServer(s, signal, problems)))).filter((s): s is Sample => s !== undefined);
    if (signal.aborted) return { ok: false, reason: 'stopped', nextPollMs: undefined };
    const best = selectBest(samples);
    if (!best) {
      this.#failures++;
      const next = nextPollAfterFailure(this.#failures, this.#o);
      const reason = problems.join('; ') || 'no usable reply';
      this.#o.log.warn(`no time from ${servers.join(', ')} (${reason}); retrying in ${Math.round(next)} ms`);
      return { ok: false, reason, nextPollMs: next };
    }
    const correction = this.#correct(best);
    this.#failures = 0;
    const next = nextPollAfterSuccess(this.#pollMs, correction, this.#o);
    this.#pollMs = next;
    this.#lastSyncMono = mono();
    this.#setStatus({
      synced: true,
      epoch: this.#epoch,
      syncDisabled: false,
      offsetMs: Math.round(best.offsetMs * 1000) / 1000,
      server: best.server,
      lastSync: new Date(this.#o.clock.now()).toISOString(),
    });
    this.#watchStaleness();
    return { ok: true, sample: best, correction, nextPollMs: next };
  }

  /** Steps or slews the clock for the chosen sample (nothing when the clock is read-only). */
  #correct(best: Sample): Correction | undefined {
    const clock = this.#o.clock;
    const c = decideCorrection(best.offsetMs, !this.#corrected, this.#o);
    if (!clock.canAdjust) {
      if (!this.#warnedReadOnly) this.#o.log.warn(`clock is read-only here: measured offset ${best.offsetMs.toFixed(3)} ms from ${best.server}, not corrected`);
      this.#warnedReadOnly = true;
      return undefined;
    }
    if (c.action === 'step') {
      clock.step(c.offsetMs);
      this.#epoch++;
      this.#o.log.info(`stepped the clock by ${c.offsetMs.toFixed(3)} ms (server ${best.server}, delay ${best.delayMs.toFixed(3)} ms, epoch ${this.#epoch})`);
    } else {
      clock.slew(c.offsetMs, this.#pollMs ?? this.#o.minPollMs);
      if (!this.#corrected) this.#o.log.info(`synchronised with ${best.server}: slewing ${c.offsetMs.toFixed(3)} ms`);
    }
    this.#corrected = true;
    return c;
  }

  /** A burst of queries to each address of one server; the minimum-delay sample, or undefined. */
  async #sampleServer(server: string, signal: AbortSignal, problems: string[]): Promise<Sample | undefined> {
    let host: string;
    let port: number;
    try {
      ({ host, port } = parseServer(server));
    } catch (err) {
      problems.push((err as Error).message);
      return undefined;
    }
    let addresses: string[];
    try {
      addresses = net.isIP(host) ? [host] : (await this.#o.resolve(host)).slice(0, this.#o.maxAddressesPerServer);
    } catch (err) {
      problems.push(`${server}: ${(err as Error).message}`);
      return undefined;
    }
    if (addresses.length === 0) {
      problems.push(`${server}: no addresses`);
      return undefined;
    }
    const bursts = await Promise.all(addresses.map((a) => this.#burst(server, a, port, signal, problems)));
    return selectBest(bursts.filter((s): s is Sample => s !== undefined));
  }

  async #burst(server: string, address: string, port: number, signal: AbortSignal, problems: string[]): Promise<Sample | undefined> {
    const got: Sample[] = [];
    let lastProblem: string | undefined;
    for (let i = 0; i < this.#o.samples && !signal.aborted; i++) {
      if (i > 0) await sleep(this.#o.sampleGapMs, signal);
      if (signal.aborted) break;
      try {
        const m = await query(address, port, this.#o.clock, {
          timeoutMs: this.#o.queryTimeoutMs,
          signal,
          ...(this.#o.maxRootDistanceMs !== undefined ? { maxRootDistanceMs: this.#o.maxRootDistanceMs } : {}),
        });
        got.push({ ...m, server, address });
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof KissOfDeathError) {
          this.#kissed(server, err.code);
          lastProblem = `${address}: ${err.message}`;
          break;
        }
        const msg = (err as Error).message;
        lastProblem = msg.includes(address) ? msg : `${address}: ${msg}`;
        // The port is closed (ICMP unreachable) or the network is down: more tries will not help.
        if (err instanceof SntpError && err.reason === 'network') break;
      }
    }
    if (got.length === 0 && lastProblem) problems.push(lastProblem);
    return minDelaySample(got);
  }

  #kissed(server: string, code: string): void {
    if (code === 'RATE') {
      const ms = 2 * (this.#pollMs ?? this.#o.minPollMs);
      this.#holdoffs.set(server, { untilMono: mono() + ms, reason: `asked to slow down (RATE) for ${Math.round(ms / 1000)} s` });
      this.#o.log.warn(`${server} sent kiss-o'-death RATE: not asking it for ${Math.round(ms / 1000)} s`);
    } else if (code === 'DENY' || code === 'RSTR') {
      this.#holdoffs.set(server, { untilMono: Number.POSITIVE_INFINITY, reason: `refused us (${code})` });
      this.#o.log.warn(`${server} sent kiss-o'-death ${code}: not asking it again until the server list changes`);
    } else {
      this.#o.log.warn(`${server} sent kiss-o'-death ${JSON.stringify(code)}`);
    }
  }

  // ---- the API's one-off query -------------------------------------------------------------

  /** One query to `server` (default: the first configured one), without touching the clock. */
  /**
   * One query to `server`, else to the first server in use (the configuration's, else DHCP's),
   * else to the default (Talos's): the answer names the server that answered.
   */
  async check(server?: string): Promise<Sample> {
    const name = server?.trim() || this.servers[0] || this.#o.defaultServers[0];
    if (!name) throw new NoServerError('no NTP server configured, from DHCP or by default');
    const { host, port } = parseServer(name);
    const addresses = net.isIP(host) ? [host] : await this.#o.resolve(host);
    const address = addresses[0];
    if (!address) throw new SntpError('network', `${name}: no addresses`);
    const m = await query(address, port, this.#o.clock, {
      timeoutMs: this.#o.queryTimeoutMs,
      ...(this.#o.maxRootDistanceMs !== undefined ? { maxRootDistanceMs: this.#o.maxRootDistanceMs } : {}),
    });
    return { ...m, server: name, address };
  }
}

export class NoServerError extends Error {
  override name = 'NoServerError';
}

async function defaultResolve(host: string): Promise<string[]> {
  const all = await dns.promises.lookup(host, { all: true });
  return all.map((a) => a.address);
}
