// timed's daemon: the sync loop and time.TimeService on a real unix socket, against a fake
// NTP server on loopback, with a simulated clock.
import { silentLogger } from '../lib/log.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceClient } from '../contract/protos.ts';
import { StatePublisher } from '../daemon/publisher.ts';
import { MemoryState } from '../state/memory.ts';
import { SimulatedClock } from './clock.ts';
import { toTimestamp } from './api.ts';
import { type Timed, configFromEnv, mayAdjustClock, startTimed } from './main.ts';
import { TIME_STATUS_NAMESPACE, TIME_STATUS_TYPE, waitSynced } from '../contract/resources/time-status.ts';
import { FakeNtpServer } from './testing.ts';

const quiet = silentLogger;

interface TimeMsg {
  metadata: { hostname: string };
  server: string;
  localtime: { seconds: string; nanos: number };
  remotetime: { seconds: string; nanos: number };
}
type Cb = (e: grpc.ServiceError | null, r?: { messages: TimeMsg[] }) => void;
type TimeClient = grpc.Client & { Time(req: object, cb: Cb): void; TimeCheck(req: { server: string }, cb: Cb): void };

const ms = (t: { seconds: string; nanos: number }) => Number(t.seconds) * 1000 + t.nanos / 1e6;

describe('timed daemon', () => {
  let dir: string;
  let server: FakeNtpServer;
  let other: FakeNtpServer;
  let timed: Timed;
  let client: TimeClient;
  const state = new MemoryState();

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-timed-'));
    process.env.BRONZE_RUN_DIR = dir;
    server = await FakeNtpServer.start({ offsetMs: 0 });
    other = await FakeNtpServer.start({ offsetMs: 60_000 });
    timed = await startTimed({
      log: quiet,
      clock: new SimulatedClock({ offsetMs: -2000 }),
      publisher: new StatePublisher(state, 'timed'),
      config: { servers: [server.spec] },
      sync: { minPollMs: 200, maxPollMs: 400, samples: 1, queryTimeoutMs: 300 },
    });
    const Time = serviceClient('time.TimeService');
    client = new Time(`unix:${timed.server.socket}`, grpc.credentials.createInsecure()) as unknown as TimeClient;
  });

  afterAll(async () => {
    client?.close();
    await timed?.stop();
    await server?.close();
    await other?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('syncs and publishes TimeStatus into the state', async () => {
    expect(await waitSynced(new StatePublisher(state, 'reader'), 3000)).toBe(true);
    const [res] = await state.list(TIME_STATUS_NAMESPACE, TIME_STATUS_TYPE);
    expect(res?.spec).toEqual({ synced: true, epoch: 1, syncDisabled: false });
  });

  it('answers Time with the configured server, local and remote time', async () => {
    const r = await new Promise<{ messages: TimeMsg[] }>((resolve, reject) => client.Time({}, (e, v) => (e ? reject(e) : resolve(v!))));
    expect(r.messages).toHaveLength(1);
    const m = r.messages[0]!;
    expect(m.metadata.hostname).toBe(os.hostname());
    expect(m.server).toBe(server.spec);
    expect(Math.abs(ms(m.remotetime) - Date.now())).toBeLessThan(1000);
    expect(Math.abs(ms(m.localtime) - ms(m.remotetime))).toBeLessThan(20); // the clock was stepped
  });

  it('answers TimeCheck against the server in the request', async () => {
    const r = await new Promise<{ messages: TimeMsg[] }>((resolve, reject) => client.TimeCheck({ server: other.spec }, (e, v) => (e ? reject(e) : resolve(v!))));
    const m = r.messages[0]!;
    expect(m.server).toBe(other.spec);
    expect(ms(m.remotetime) - ms(m.localtime)).toBeGreaterThan(59_900);
  });

  it('maps errors to gRPC codes', async () => {
    const call = (server: string) =>
      new Promise<grpc.ServiceError>((resolve) => client.TimeCheck({ server }, (e) => resolve(e!)));
    expect((await call('bad host:x')).code).toBe(grpc.status.INVALID_ARGUMENT);
    const dead = await FakeNtpServer.start({ drop: true });
    const e = await call(dead.spec);
    await dead.close();
    expect(e.code).toBe(grpc.status.UNAVAILABLE);
    expect(e.details).toMatch(/no reply/);
  });
});

describe('timed wiring helpers', () => {
  it('never adjusts the clock outside a node unless told', () => {
    expect(mayAdjustClock({})).toBe(false); // tests are not the single executable under PID 1
    expect(mayAdjustClock({ BRONZE_TIMED_CLOCK: 'readonly' })).toBe(false);
    expect(mayAdjustClock({ BRONZE_TIMED_CLOCK: 'adjust' })).toBe(true);
    expect(() => mayAdjustClock({ BRONZE_TIMED_CLOCK: 'yes' })).toThrow(/adjust/);
  });

  it('reads the interim config from BRONZE_TIME_CONFIG', () => {
    expect(configFromEnv({})).toBeUndefined();
    expect(configFromEnv({ BRONZE_TIME_CONFIG: '{"servers":["a","b"],"bootTimeout":"2m"}' })).toEqual({ servers: ['a', 'b'], bootTimeout: '2m' });
    expect(() => configFromEnv({ BRONZE_TIME_CONFIG: '{"server":"a"}' })).toThrow(/unknown field server/);
    expect(() => configFromEnv({ BRONZE_TIME_CONFIG: '{"servers":"a"}' })).toThrow(/list of strings/);
    expect(() => configFromEnv({ BRONZE_TIME_CONFIG: '[]' })).toThrow(/object/);
  });

  it('encodes protobuf timestamps', () => {
    const t = toTimestamp(1_700_000_000_123.4567);
    expect(t.seconds).toBe('1700000000');
    expect(Math.abs(t.nanos - 123_456_700)).toBeLessThan(1000); // a double holds this time to ~0.2 µs
    expect(toTimestamp(1500)).toEqual({ seconds: '1', nanos: 500_000_000 });
    expect(toTimestamp(-1)).toEqual({ seconds: '-1', nanos: 999_000_000 });
  });
});
