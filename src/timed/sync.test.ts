import { afterEach, describe, expect, it } from 'vitest';
import { StatePublisher } from '../daemon/publisher.ts';
import { ListLogger, type Logger } from '../lib/log.ts';
import { MemoryState } from '../state/memory.ts';
import { type Clock, SimulatedClock } from './clock.ts';
import { TIME_STATUS_ID, TIME_STATUS_NAMESPACE, TIME_STATUS_TYPE, type TimeStatusSpec, waitSynced } from '../contract/resources/time-status.ts';
import { TimeSync, type TimeSyncOptions, effectiveServers, nextPollAfterFailure, nextPollAfterSuccess, parseDuration } from './sync.ts';
import { FakeNtpServer } from './testing.ts';

const FAST: Partial<TimeSyncOptions> = {
  minPollMs: 150,
  maxPollMs: 600,
  retryMs: 50,
  samples: 2,
  sampleGapMs: 5,
  queryTimeoutMs: 150,
  maxSyncAgeMs: 400,
};

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function fake(b: Parameters<typeof FakeNtpServer.start>[0] = {}): Promise<FakeNtpServer> {
  const s = await FakeNtpServer.start(b);
  cleanup.push(() => s.close());
  return s;
}

function makeSync(clock: Clock, o: Partial<TimeSyncOptions> = {}) {
  const log = new ListLogger();
  const state = new MemoryState();
  const publisher = new StatePublisher(state, 'timed');
  const sync = new TimeSync({ ...FAST, ...o, clock, log, publisher });
  cleanup.push(() => sync.stop());
  return { sync, log, state, publisher };
}

async function until(what: string, cond: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('TimeSync', () => {
  it('steps a clock 5 s ahead on the first sync, publishes TimeStatus, and wakes waiters', async () => {
    const server = await fake();
    const clock = new SimulatedClock({ offsetMs: 5000 });
    const { sync, state, publisher } = makeSync(clock);
    sync.setConfig({ servers: [server.spec] });
    const waiting = waitSynced(publisher, 3000);
    sync.start();
    expect(await sync.waitSynced(3000)).toBe(true);
    expect(await waiting).toBe(true);
    expect(clock.events.map((e) => e.kind)).toEqual(['step']);
    expect(Math.abs(clock.errorMs)).toBeLessThan(10);
    const res = await state.get<TimeStatusSpec>(TIME_STATUS_NAMESPACE, TIME_STATUS_TYPE, TIME_STATUS_ID);
    expect(res.metadata.owner).toBe('timed');
    // Talos's TimeStatus fields only; the sync's details stay with timed (status()).
    expect(res.spec).toEqual({ synced: true, epoch: 1, syncDisabled: false });
    expect(sync.status()).toMatchObject({ synced: true, epoch: 1, server: server.spec });
    expect(sync.status().offsetMs).toBeLessThan(-4990);
    expect(Date.parse(sync.status().lastSync!)).toBeGreaterThan(Date.now() - 5000);
  });

  it('slews a 20 ms offset once synced, without a new epoch', async () => {
    const server = await fake();
    const clock = new SimulatedClock({ slewPpm: Number.POSITIVE_INFINITY });
    const { sync } = makeSync(clock);
    sync.setConfig({ servers: [server.spec] });
    const first = await sync.syncNow();
    expect(first.ok).toBe(true);
    const epoch = sync.status().epoch;
    clock.jump(20);
    const r = await sync.syncNow();
    expect(r.ok && r.correction?.action).toBe('slew');
    expect(r.ok && r.correction!.offsetMs).toBeGreaterThan(-25);
    expect(r.ok && r.correction!.offsetMs).toBeLessThan(-15);
    expect(sync.status().epoch).toBe(epoch);
    expect(Math.abs(clock.errorMs)).toBeLessThan(5);
  });

  it('queries every server and follows the best one, despite a dead one', async () => {
    const s1 = await fake({ stratum: 1, offsetMs: 300 });
    const s3 = await fake({ stratum: 3, offsetMs: 0 });
    const dead = await fake({ drop: true });
    const clock = new SimulatedClock();
    const { sync } = makeSync(clock);
    sync.setConfig({ servers: [dead.spec, s3.spec, s1.spec] });
    const r = await sync.syncNow();
    expect(r.ok).toBe(true);
    expect(r.ok && r.sample.server).toBe(s1.spec);
    expect(s1.requests).toBe(2); // one burst of `samples`
    expect(Math.abs(clock.errorMs - 300)).toBeLessThan(10);
  });

  it('takes servers from the config, else from DHCP, else has none', async () => {
    expect(effectiveServers({ servers: ['a'] }, ['b'])).toEqual(['a']);
    expect(effectiveServers({ servers: [] }, ['b', ' '])).toEqual(['b']);
    expect(effectiveServers(undefined, [])).toEqual([]);
    const server = await fake();
    const { sync } = makeSync(new SimulatedClock());
    const none = await sync.syncNow();
    expect(none).toMatchObject({ ok: false, reason: 'no NTP servers', nextPollMs: undefined });
    expect(sync.status().synced).toBe(false);
    sync.start();
    sync.setDhcpServers([server.spec]); // an input change starts a round at once
    expect(await sync.waitSynced(2000)).toBe(true);
    expect(sync.status().server).toBe(server.spec);
  });

  it('reports synced and syncDisabled when disabled, and not synced when enabled again', async () => {
    const { sync, state } = makeSync(new SimulatedClock());
    sync.setConfig({ disabled: true, servers: ['127.0.0.1:9'] });
    sync.start();
    await until('disabled status', () => sync.status().syncDisabled);
    expect(sync.status()).toEqual({ synced: true, epoch: 0, syncDisabled: true });
    await sync.stop(); // waits for the publisher
    expect((await state.get(TIME_STATUS_NAMESPACE, TIME_STATUS_TYPE, TIME_STATUS_ID)).spec).toEqual({ synced: true, epoch: 0, syncDisabled: true });
    sync.start();
    const blackhole = await fake({ drop: true });
    sync.setConfig({ servers: [blackhole.spec] });
    await until('enabled status', () => !sync.status().syncDisabled);
    expect(sync.status().synced).toBe(false);
  });

  it('holds off a server that sent DENY until the server list changes', async () => {
    const server = await fake({ kiss: 'DENY' });
    const { sync, log } = makeSync(new SimulatedClock());
    sync.setConfig({ servers: [server.spec] });
    const r1 = await sync.syncNow();
    expect(r1.ok).toBe(false);
    expect(server.requests).toBe(1); // the burst stops at the kiss
    const r2 = await sync.syncNow();
    expect(r2).toMatchObject({ ok: false });
    expect(!r2.ok && r2.reason).toMatch(/held off \(refused us \(DENY\)\)/);
    expect(server.requests).toBe(1);
    expect(log.lines.join('\n')).toMatch(/kiss-o'-death DENY/);
    server.behaviour.kiss = undefined;
    sync.setConfig({ servers: [server.spec, '127.0.0.1:9'] });
    sync.setConfig({ servers: [server.spec] });
    expect((await sync.syncNow()).ok).toBe(true);
  });

  it('loses sync when servers stop answering, backs off, and recovers', async () => {
    const server = await fake();
    const clock = new SimulatedClock();
    const { sync, log } = makeSync(clock);
    sync.setConfig({ servers: [server.spec] });
    sync.start();
    expect(await sync.waitSynced(2000)).toBe(true);
    server.behaviour.drop = true;
    await until('not synced', () => !sync.status().synced, 3000);
    expect(log.lines.some((l) => /not confirmed by any server/.test(l))).toBe(true);
    await until('a failed round', () => log.lines.some((l) => /no time from .* retrying in/.test(l)));
    server.behaviour.drop = false;
    expect(await sync.waitSynced(3000)).toBe(true);
  });

  it('does not adjust a read-only clock but still measures', async () => {
    const server = await fake({ offsetMs: 250 });
    const readOnly: Clock = { canAdjust: false, now: () => Date.now(), step: () => expect.fail('step'), slew: () => expect.fail('slew') };
    const { sync, log } = makeSync(readOnly);
    sync.setConfig({ servers: [server.spec] });
    const r = await sync.syncNow();
    expect(r.ok && r.correction).toBeUndefined();
    expect(sync.status().offsetMs).toBeGreaterThan(200);
    expect(log.lines.join('\n')).toMatch(/read-only/);
  });

  it('answers one-off checks against a named or the configured server, else the default (issue 17: rc 1 without one)', async () => {
    const server = await fake({ offsetMs: -1500 });
    const fallback = await fake({ offsetMs: 0 });
    const { sync } = makeSync(new SimulatedClock(), { defaultServers: [fallback.spec] });
    expect((await sync.check()).server, 'nothing configured, nothing from DHCP: the default answers').toBe(fallback.spec);
    await expect(makeSync(new SimulatedClock(), { defaultServers: [] }).sync.check()).rejects.toThrow(/no NTP server configured, from DHCP or by default/);
    const s = await sync.check(server.spec);
    expect(s.offsetMs).toBeLessThan(-1490);
    sync.setDhcpServers([server.spec]);
    expect((await sync.check()).server).toBe(server.spec);
  });
});

describe('poll interval', () => {
  const o = { minPollMs: 64_000, maxPollMs: 1_024_000, stepThresholdMs: 128, retryMs: 2000 };

  it('starts at minPoll, doubles while stable up to maxPoll, and resets after a step or a large slew', () => {
    let p = nextPollAfterSuccess(undefined, { action: 'step', offsetMs: 3000 }, o);
    expect(p).toBe(64_000);
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) seen.push((p = nextPollAfterSuccess(p, { action: 'slew', offsetMs: 2 }, o)));
    expect(seen).toEqual([128_000, 256_000, 512_000, 1_024_000, 1_024_000, 1_024_000]);
    expect(nextPollAfterSuccess(p, { action: 'slew', offsetMs: 40 }, o)).toBe(64_000);
    expect(nextPollAfterSuccess(p, { action: 'step', offsetMs: 200 }, o)).toBe(64_000);
  });

  it('backs off failed rounds from retryMs to maxPoll', () => {
    expect([1, 2, 3, 4, 9, 20, 100].map((f) => nextPollAfterFailure(f, o))).toEqual([2000, 4000, 8000, 16_000, 512_000, 1_024_000, 1_024_000]);
  });
});

describe('parseDuration', () => {
  it('reads Go durations and milliseconds', () => {
    expect(parseDuration('2m')).toBe(120_000);
    expect(parseDuration('1m30s')).toBe(90_000);
    expect(parseDuration('1h0m0.5s')).toBe(3_600_500);
    expect(parseDuration('300ms')).toBe(300);
    expect(parseDuration('0')).toBe(0);
    expect(parseDuration(1500)).toBe(1500);
    for (const bad of ['', '5', '2x', 'm', '1m 2s', '-1s']) expect(() => parseDuration(bad)).toThrow(/bad duration/);
    expect(() => parseDuration(-1)).toThrow();
  });

  it('is checked when the config is set', () => {
    const sync = new TimeSync({ clock: new SimulatedClock(), log: new ListLogger() });
    expect(() => sync.setConfig({ bootTimeout: 'soon' })).toThrow(/bad duration/);
    sync.setConfig({ bootTimeout: '90s' });
    expect(sync.bootTimeoutMs).toBe(90_000);
  });
});
