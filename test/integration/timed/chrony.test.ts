// timed against a real NTP server: chronyd in a network namespace created here, queried over
// a veth pair from the test process. Clocks are simulated (started from the real time, so the
// offsets measured are real); the host's clock is never touched (chronyd runs with -x).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListLogger, type Logger } from '../../../src/lib/log.ts';
import { SimulatedClock } from '../../../src/timed/clock.ts';
import { TimeSync, type TimeSyncOptions } from '../../../src/timed/sync.ts';
import { ChronyNetns } from './chrony.ts';

const FAST: Partial<TimeSyncOptions> = {
  minPollMs: 300,
  maxPollMs: 1200,
  retryMs: 100,
  samples: 3,
  sampleGapMs: 20,
  queryTimeoutMs: 300,
  maxSyncAgeMs: 1500,
};

async function until(what: string, cond: () => boolean, timeoutMs: number): Promise<number> {
  const start = performance.now();
  while (!cond()) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return performance.now() - start;
}

describe('timed against chronyd in a network namespace', () => {
  let chrony: ChronyNetns | undefined;
  const syncs: TimeSync[] = [];

  function newSync(clock: SimulatedClock, o: Partial<TimeSyncOptions> = {}) {
    const log = new ListLogger();
    const sync = new TimeSync({ ...FAST, ...o, clock, log });
    sync.setConfig({ servers: [chrony!.serverAddress] });
    syncs.push(sync);
    return { sync, log };
  }

  beforeAll(async () => {
    chrony = new ChronyNetns();
    await chrony.setUp();
  }, 20_000);

  afterAll(async () => {
    await Promise.all(syncs.map((s) => s.stop()));
    await chrony?.tearDown();
  }, 20_000);

  it('syncs a clock with |offset| < 50 ms and answers a one-off check', async () => {
    const clock = new SimulatedClock();
    const { sync } = newSync(clock);
    sync.start();
    expect(await sync.waitSynced(5000)).toBe(true);
    const st = sync.status();
    expect(st).toMatchObject({ synced: true, syncDisabled: false, server: chrony!.serverAddress });
    expect(Math.abs(st.offsetMs!)).toBeLessThan(50);
    expect(Math.abs(clock.errorMs)).toBeLessThan(50);
    const s = await sync.check();
    expect(s.stratum).toBe(8);
    expect(Math.abs(s.offsetMs)).toBeLessThan(50);
    expect(s.delayMs).toBeLessThan(50);
  });

  it('steps a clock 5 s ahead', async () => {
    const clock = new SimulatedClock({ offsetMs: 5000 });
    const { sync } = newSync(clock);
    const r = await sync.syncNow();
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.correction?.action).toBe('step');
    expect(Math.abs(r.correction!.offsetMs + 5000)).toBeLessThan(50);
    expect(Math.abs(clock.errorMs)).toBeLessThan(50);
    expect(sync.status().epoch).toBe(1);
  });

  it('slews a clock 20 ms ahead once synced', async () => {
    const clock = new SimulatedClock();
    const { sync } = newSync(clock);
    expect((await sync.syncNow()).ok).toBe(true);
    const epoch = sync.status().epoch;
    clock.jump(20);
    const r = await sync.syncNow();
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.correction?.action).toBe('slew');
    expect(Math.abs(r.correction!.offsetMs + 20)).toBeLessThan(10);
    expect(clock.events.at(-1)).toMatchObject({ kind: 'slew' });
    expect(clock.pendingSlewMs).toBeLessThan(-10); // 500 ppm: it takes 40 s
    expect(sync.status().epoch).toBe(epoch);
  });

  it('is not synced after the timeout while chronyd is down, and recovers when it returns', async () => {
    const running = syncs[0]!;
    expect(running.status().synced).toBe(true);
    await chrony!.stop();

    // A client that starts now never syncs.
    const { sync: fresh, log } = newSync(new SimulatedClock());
    fresh.start();
    expect(await fresh.waitSynced(1000)).toBe(false);
    expect(fresh.status().synced).toBe(false);
    expect(log.lines.join('\n')).toMatch(/no time from .*ECONNREFUSED|no time from .*no reply/);

    // The synced one loses it once the last sync is maxSyncAge old.
    const lostAfter = await until('the running client to lose sync', () => !running.status().synced, FAST.maxSyncAgeMs! + 2000);
    expect(lostAfter).toBeLessThan(FAST.maxSyncAgeMs! + 2000);

    await chrony!.start();
    expect(await running.waitSynced(5000)).toBe(true);
    expect(await fresh.waitSynced(5000)).toBe(true);
    expect(Math.abs(running.status().offsetMs!)).toBeLessThan(50);
  }, 20_000);
});
