// The supervisor against real child processes: the services are the small node scripts of
// test/fixtures/supervisor, run with this very node (process.execPath).

import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startLevels } from './graph.ts';
import { READY_MESSAGE, STARTING_HEALTH_MESSAGE } from './health.ts';
import { READY_STDIO, withReadyFd } from '../../lib/ready.ts';
import { Supervisor } from './supervisor.ts';
import type { ServiceSpec, ServiceState, SupervisorOptions } from './types.ts';

const fixtures = fileURLToPath(new URL('../../../test/fixtures/supervisor/', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'bronze-supervisor-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A spec running a fixture script with node. */
function node(id: string, script: string, args: string[] = [], extra: Partial<ServiceSpec> = {}): ServiceSpec {
  return { id, dependsOn: [], command: process.execPath, args: [join(fixtures, script), ...args], ...extra };
}

interface Seen {
  id: string;
  state: ServiceState;
  message: string;
  ts: number;
}

const running: Supervisor[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((sup) => sup.stop()));
});

/** A supervisor that the test's cleanup stops, and the log of every event it emitted. */
function supervise(specs: ServiceSpec[], opts: SupervisorOptions = {}): { sup: Supervisor; seen: Seen[] } {
  const sup = new Supervisor(specs, opts);
  running.push(sup);
  const seen: Seen[] = [];
  sup.on('event', (id: string, ev: { state: ServiceState; message: string; ts: Date }) =>
    seen.push({ id, state: ev.state, message: ev.message, ts: ev.ts.getTime() }),
  );
  return { sup, seen };
}

async function waitFor(what: string, ok: () => boolean, timeout = 5000): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function indexOf(seen: Seen[], id: string, state: ServiceState, message = ''): number {
  const at = seen.findIndex((ev) => ev.id === id && ev.state === state && ev.message.includes(message));
  expect(at, `${id} ${state} ${message}`).toBeGreaterThanOrEqual(0);
  return at;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Connects to a unix socket: the health check of healthy-after.mjs. */
const canConnect = (path: string) => (): Promise<void> =>
  new Promise((resolve, reject) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });

/** The announced restart delays and the measured ones (exit event → next Running event). */
function restartDelays(seen: Seen[], id: string): { announced: number[]; measured: number[] } {
  const announced: number[] = [];
  const measured: number[] = [];
  const mine = seen.filter((ev) => ev.id === id);
  mine.forEach((ev, i) => {
    const m = /restarting in (\d+)ms/.exec(ev.message);
    if (!m) return;
    const next = mine.slice(i + 1).find((later) => later.state === 'Running' && later.message.startsWith('Process started'));
    if (!next) return;
    announced.push(Number(m[1]));
    measured.push(next.ts - ev.ts);
  });
  return { announced, measured };
}

describe('dependency order', () => {
  it('rejects invalid specs, naming the services involved', () => {
    expect(() => startLevels([{ id: 'a', dependsOn: [] }, { id: 'a', dependsOn: [] }])).toThrow('duplicate service id: a');
    expect(() => startLevels([{ id: 'apid', dependsOn: ['nope'] }])).toThrow('service apid depends on unknown service nope');
    expect(() =>
      startLevels([
        { id: 'x', dependsOn: [] },
        { id: 'a', dependsOn: ['c', 'x'] },
        { id: 'b', dependsOn: ['a'] },
        { id: 'c', dependsOn: ['b'] },
      ]),
    ).toThrow('dependency cycle: a → c → b → a');
    expect(() => startLevels([{ id: 'self', dependsOn: ['self'] }])).toThrow('dependency cycle: self → self');
    expect(() => new Supervisor([node('a', 'run.mjs', [], { dependsOn: ['b'] })])).toThrow('service a depends on unknown service b');
    expect(() => new Supervisor([node('a', 'run.mjs'), node('a', 'run.mjs')])).toThrow('duplicate service id: a');
    expect(() =>
      new Supervisor([node('a', 'run.mjs', [], { dependsOn: ['b'] }), node('b', 'run.mjs', [], { dependsOn: ['a'] })]),
    ).toThrow('dependency cycle: a → b → a');
    expect(() => new Supervisor([{ id: 'a', dependsOn: [], command: '' }])).toThrow('service a has no command');
  });
});

describe('Supervisor', () => {
  it('starts services in dependency order, Waiting → Preparing → Running', async () => {
    // Listed backwards on purpose: the order comes from the dependencies.
    const { sup, seen } = supervise([
      node('c', 'run.mjs', [], { dependsOn: ['b'] }),
      node('b', 'run.mjs', [], { dependsOn: ['a'] }),
      node('a', 'run.mjs', [], { argv0: 'apid', env: { BRONZE_TEST_ROLE: 'role-a' } }),
    ]);
    sup.start();
    await waitFor('all running', () => sup.list().every((s) => s.state === 'Running'));

    for (const id of ['a', 'b', 'c']) {
      const states = seen.filter((ev) => ev.id === id).map((ev) => ev.state);
      expect(new Set(states.slice(0, -2))).toEqual(new Set(['Waiting']));
      expect(states.slice(-2)).toEqual(['Preparing', 'Running']);
      const events = sup.get(id)!.events;
      for (let i = 1; i < events.length; i++) expect(events[i]!.ts.getTime()).toBeGreaterThanOrEqual(events[i - 1]!.ts.getTime());
    }
    expect(indexOf(seen, 'c', 'Waiting', 'Waiting for b')).toBeLessThan(indexOf(seen, 'b', 'Running'));
    expect(indexOf(seen, 'a', 'Running')).toBeLessThan(indexOf(seen, 'b', 'Preparing'));
    expect(indexOf(seen, 'b', 'Running')).toBeLessThan(indexOf(seen, 'c', 'Preparing'));

    // Real processes, known to pids(), started with the given argv0 and environment.
    const pids = sup.list().map((s) => s.pid!);
    expect(sup.pids()).toEqual(new Set(pids));
    for (const pid of pids) expect(alive(pid)).toBe(true);
    await waitFor('a ready', () => sup.logs('a').length > 0);
    expect(sup.logs('a')).toEqual(['ready argv0=apid role=role-a']);

    await sup.stop();
    expect(sup.pids().size).toBe(0);
    for (const pid of pids) expect(alive(pid)).toBe(false);
    expect(sup.list().map((s) => s.state)).toEqual(['Finished', 'Finished', 'Finished']);
  });

  it('starts a dependent only once its dependency is healthy, and keeps it when the dependency turns unhealthy', async () => {
    const socket = join(tmp, 'health.sock');
    const { sup, seen } = supervise([
      node('app', 'run.mjs', [], { dependsOn: ['db'] }),
      node('db', 'healthy-after.mjs', [socket, '300', '800'], { healthCheck: canConnect(socket), healthInterval: 40 }),
    ]);
    sup.start();
    await waitFor('app running', () => sup.get('app')!.state === 'Running');

    const healthy = indexOf(seen, 'db', 'Running', 'Health check successful');
    // Before its first success a service is starting, not failing.
    expect(indexOf(seen, 'db', 'Running', STARTING_HEALTH_MESSAGE)).toBeLessThan(healthy);
    expect(seen.slice(0, healthy).some((ev) => ev.id === 'db' && /Health check failed/.test(ev.message))).toBe(false);
    expect(healthy).toBeLessThan(indexOf(seen, 'app', 'Preparing'));
    const dbStarted = seen[indexOf(seen, 'db', 'Running', 'Process started')]!.ts;
    expect(seen[indexOf(seen, 'app', 'Preparing')]!.ts - dbStarted).toBeGreaterThanOrEqual(300);
    expect(seen.filter((ev) => ev.id === 'app' && ev.state === 'Waiting').map((ev) => ev.message)).toContain('Waiting for db');

    // db closes its socket at 800 ms: the health change is an event, and app keeps running.
    await waitFor('db unhealthy', () => sup.get('db')!.healthy === false);
    const db = sup.get('db')!;
    expect(db.state).toBe('Running');
    expect(db.lastHealthMessage).toMatch(/^Health check failed: .*ENOENT/);
    expect(db.events.at(-1)!.message).toBe(db.lastHealthMessage);
    expect(sup.get('app')!.state).toBe('Running');
    expect(sup.get('app')!.events.at(-1)!.state).toBe('Running');
  });

  it('health checks back off instead of flapping: slow answers under load do not make a service unhealthy, failures in a row do', async () => {
    // The check's behaviour, scripted: 'ok', 'slow' (answers after the timeout), 'fail'.
    let mode: 'ok' | 'slow' | 'fail' = 'ok';
    const calls: number[] = [];
    const check = async () => {
      calls.push(Date.now());
      if (mode === 'fail') throw new Error('connection refused');
      if (mode === 'slow') await sleep(1300);
    };
    const { sup, seen } = supervise([node('svc', 'run.mjs', [], { healthCheck: check, healthInterval: 50 })], { healthFailures: 3, healthBackoffMax: 400, healthTimeoutMax: 3000 });
    sup.start();
    await waitFor('svc healthy', () => sup.get('svc')!.healthy === true);
    const events = () => seen.filter((ev) => ev.id === 'svc' && ev.message.startsWith('Health check'));
    const before = events().length;

    // Slow answers (1.3 s): the first check times out (after 1 s), the service stays healthy,
    // and the next one, which may take 2 s, passes. No event, no flap.
    mode = 'slow';
    await sleep(2800);
    expect(sup.get('svc')!.healthy).toBe(true);
    mode = 'ok';
    await sleep(300);
    expect(sup.get('svc')!.healthy).toBe(true);
    expect(events().length, events().map((e) => e.message).join('\n')).toBe(before);

    // Real failures: unhealthy after three in a row, checked less and less often meanwhile.
    mode = 'fail';
    const from = calls.length;
    await waitFor('svc unhealthy', () => sup.get('svc')!.healthy === false, 3000);
    expect(sup.get('svc')!.lastHealthMessage).toBe('Health check failed: connection refused');
    await sleep(1500);
    const gaps = calls.slice(from).map((t, i, a) => (i ? t - a[i - 1]! : 0)).slice(1);
    expect(gaps.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...gaps), `gaps ${gaps.join(', ')}`).toBeGreaterThanOrEqual(350); // backed off to the cap
    expect(gaps.length, 'at most one check per 50 ms would be 30').toBeLessThan(12);
    expect(events().slice(before).map((e) => e.message)).toEqual(['Health check failed: connection refused']);

    // Recovery: healthy at the next check, and the interval is the normal one again.
    mode = 'ok';
    await waitFor('svc healthy again', () => sup.get('svc')!.healthy === true, 2000);
    const n = calls.length;
    await sleep(300);
    expect(calls.length - n).toBeGreaterThanOrEqual(3);
  });

  it('startNice: the process starts at that nice value and runs at 0 once its first health check passes', async () => {
    let ready = false;
    const check = async () => {
      if (!ready) throw new Error('not yet');
    };
    const { sup } = supervise([node('svc', 'run.mjs', [], { healthCheck: check, healthInterval: 50, startNice: 7 })]);
    sup.start();
    await waitFor('svc started', () => sup.get('svc')!.pid !== undefined);
    const pid = sup.get('svc')!.pid!;
    expect(os.getPriority(pid)).toBe(7);
    await sleep(300); // its checks keep failing: it stays low
    expect(os.getPriority(pid)).toBe(7);
    ready = true;
    await waitFor('svc healthy', () => sup.get('svc')!.healthy === true);
    // Only root may raise a priority back; the suite runs as root on the CI machine. Every
    // thread (node's workers too, started at 7) is back at 0.
    if (process.getuid?.() === 0) {
      const tids = readdirSync(`/proc/${pid}/task`).map(Number);
      expect(tids.length).toBeGreaterThan(1);
      expect(tids.map((tid) => os.getPriority(tid))).toEqual(tids.map(() => 0));
    }
  });

  it('startNice: a process that listens runs at 0 even before its first health check passes', async () => {
    let listening = false;
    const check = async () => {
      throw new Error('not yet');
    };
    const { sup } = supervise([node('svc', 'run.mjs', [], { healthCheck: check, healthInterval: 50, startNice: 7, listening: () => listening })]);
    sup.start();
    await waitFor('svc started', () => sup.get('svc')!.pid !== undefined);
    const pid = sup.get('svc')!.pid!;
    await sleep(200);
    expect(os.getPriority(pid)).toBe(7);
    listening = true;
    if (process.getuid?.() === 0) await waitFor('svc back at nice 0', () => os.getPriority(pid) === 0, 2000);
    expect(sup.get('svc')!.healthy).not.toBe(true);
  });

  it('notifiesReady: healthy from the process\'s READY=1 before any check passes (dependents start), then the first passing check is recorded', async () => {
    let passing = false;
    const checks: boolean[] = [];
    const check = async () => {
      checks.push(passing);
      if (!passing) throw new Error('not yet');
    };
    const { sup, seen } = supervise(
      [node('svc', 'notify-ready.mjs', ['150'], { healthCheck: check, healthInterval: 100, notifiesReady: true }), node('app', 'run.mjs', [], { dependsOn: ['svc'] })],
      { healthFailures: 1000 },
    );
    sup.start();
    await waitFor('svc healthy', () => sup.get('svc')!.healthy === true);
    expect(sup.get('svc')!.lastHealthMessage).toBe(READY_MESSAGE);
    expect(checks.length).toBeGreaterThan(0);
    expect(checks.every((ok) => !ok)).toBe(true); // no check had passed: the line did it
    await waitFor('app running', () => sup.get('app')!.state === 'Running');
    await waitFor('its output', () => sup.logs('svc').includes('told the supervisor'));
    // Checks go on after READY=1 (failing ones do not turn it unhealthy here: healthFailures),
    // and the first that passes is an event of its own.
    const ready = indexOf(seen, 'svc', 'Running', READY_MESSAGE);
    passing = true;
    await waitFor('a check passed', () => seen.some((ev) => ev.id === 'svc' && ev.message === 'Health check successful'), 3000);
    expect(indexOf(seen, 'svc', 'Running', 'Health check successful')).toBeGreaterThan(ready);
    expect(indexOf(seen, 'svc', 'Running', STARTING_HEALTH_MESSAGE)).toBeLessThan(ready);
    // Only the first: later passing checks change nothing.
    await sleep(400);
    expect(seen.filter((ev) => ev.id === 'svc' && ev.message === 'Health check successful')).toHaveLength(1);
  });

  it('notifiesReady: a process that never says READY=1 is healthy once a check passes, as any other', async () => {
    let passing = false;
    const check = async () => {
      if (!passing) throw new Error('not yet');
    };
    const { sup, seen } = supervise([node('svc', 'run.mjs', [], { healthCheck: check, healthInterval: 50, notifiesReady: true })]);
    sup.start();
    await waitFor('svc started', () => sup.get('svc')!.pid !== undefined);
    await sleep(300);
    expect(sup.get('svc')!.healthy).not.toBe(true);
    passing = true;
    await waitFor('svc healthy', () => sup.get('svc')!.healthy === true);
    expect(sup.get('svc')!.lastHealthMessage).toBe('Health check successful');
    expect(seen.some((ev) => ev.message === READY_MESSAGE)).toBe(false);
  });

  it('notifiesReady: a restarted process says READY=1 again, on a pipe of its own', async () => {
    const check = async () => {
      throw new Error('never');
    };
    const { sup, seen } = supervise([node('svc', 'notify-ready.mjs', ['0'], { healthCheck: check, healthInterval: 5000, notifiesReady: true })], { backoffBase: 10 });
    sup.start();
    await waitFor('svc healthy', () => sup.get('svc')!.healthy === true);
    const first = sup.get('svc')!.pid!;
    process.kill(first, 'SIGKILL');
    await waitFor('restarted and healthy', () => sup.get('svc')!.pid !== undefined && sup.get('svc')!.pid !== first && sup.get('svc')!.healthy === true, 5000);
    expect(seen.filter((ev) => ev.id === 'svc' && ev.message === READY_MESSAGE)).toHaveLength(2);
  });

  it('restarts a crashing service with a doubling backoff, capped at backoffMax', async () => {
    const { sup, seen } = supervise([node('crasher', 'crash.mjs', ['10', '1'])], {
      backoffBase: 100,
      backoffMax: 400,
      stableAfter: 60_000,
    });
    sup.start();
    await waitFor('4 restarts', () => sup.get('crasher')!.restarts >= 4, 8000);
    const { announced, measured } = restartDelays(seen, 'crasher');
    expect(announced.slice(0, 4)).toEqual([100, 200, 400, 400]);
    measured.slice(0, 4).forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(announced[i]! - 2);
      expect(ms).toBeLessThan(announced[i]! + 300);
    });
    expect(seen.find((ev) => ev.id === 'crasher' && ev.state === 'Waiting' && ev.message.includes('restarting'))?.message).toBe(
      'Process exited with code 1; restarting in 100ms',
    );
  });

  it('resets the backoff after the service stayed up for stableAfter', async () => {
    const counter = join(tmp, 'flaky.count');
    // Runs 0-2 and 4 crash at once, run 3 lives 900 ms (> stableAfter), run 5 stays up.
    const { sup, seen } = supervise([node('flaky', 'flaky.mjs', [counter, '10', '10', '10', '900', '10', '60000'])], {
      backoffBase: 50,
      backoffMax: 10_000,
      stableAfter: 600,
    });
    sup.start();
    await waitFor('5 restarts', () => sup.get('flaky')!.restarts === 5 && sup.logs('flaky').at(-1) === 'run 5, exiting in 60000ms', 8000);
    const { announced, measured } = restartDelays(seen, 'flaky');
    expect(announced).toEqual([50, 100, 200, 50, 100]);
    measured.forEach((ms, i) => expect(ms).toBeGreaterThanOrEqual(announced[i]! - 2));
    expect(readFileSync(counter, 'utf8')).toBe('6');
  });

  it('applies the restart policies', async () => {
    const { sup } = supervise(
      [
        node('ok-onfailure', 'crash.mjs', ['0', '0'], { restart: 'on-failure' }),
        node('ok-never', 'crash.mjs', ['0', '0'], { restart: 'never' }),
        node('fail-never', 'crash.mjs', ['0', '3'], { restart: 'never' }),
        node('fail-onfailure', 'crash.mjs', ['0', '2'], { restart: 'on-failure' }),
        node('ok-always', 'crash.mjs', ['0', '0']),
        { id: 'missing', dependsOn: [], command: '/nonexistent/bronze-test', restart: 'never' },
      ],
      { backoffBase: 20 },
    );
    sup.start();
    const settled = (id: string, state: ServiceState) => () => sup.get(id)!.state === state;
    await waitFor('finished', settled('ok-onfailure', 'Finished'));
    await waitFor('finished', settled('ok-never', 'Finished'));
    await waitFor('failed', settled('fail-never', 'Failed'));
    await waitFor('failed', settled('missing', 'Failed'));
    await waitFor('restarted', () => sup.get('fail-onfailure')!.restarts >= 1 && sup.get('ok-always')!.restarts >= 1);

    expect(sup.get('ok-onfailure')!.events.at(-1)!.message).toBe('Process exited with code 0');
    expect(sup.get('fail-never')!.events.at(-1)!.message).toBe('Process exited with code 3');
    expect(sup.get('missing')!.events.at(-1)!.message).toMatch(/^Failed to start: .*ENOENT/);
    for (const id of ['ok-onfailure', 'ok-never', 'fail-never', 'missing']) expect(sup.get(id)!.restarts).toBe(0);
  });

  it('counts Skipped services and finished one-shots as up for their dependents', async () => {
    const { sup, seen } = supervise([
      node('trustd', 'run.mjs', [], { condition: async () => false }),
      // Never healthy while it runs: only its successful exit lets apid start.
      node('setup', 'crash.mjs', ['100', '0'], {
        restart: 'on-failure',
        healthCheck: async () => Promise.reject(new Error('not yet')),
        healthInterval: 20,
      }),
      node('apid', 'run.mjs', [], { dependsOn: ['trustd', 'setup'] }),
    ]);
    sup.start();
    await waitFor('apid running', () => sup.get('apid')!.state === 'Running');
    expect(sup.get('trustd')!.state).toBe('Skipped');
    expect(sup.get('trustd')!.events.at(-1)!.message).toBe('Condition not met');
    expect(sup.get('trustd')!.pid).toBeUndefined();
    expect(sup.get('setup')!.state).toBe('Finished');
    expect(indexOf(seen, 'apid', 'Waiting', 'Waiting for setup')).toBeLessThan(indexOf(seen, 'setup', 'Finished'));
    expect(indexOf(seen, 'setup', 'Finished')).toBeLessThan(indexOf(seen, 'apid', 'Preparing'));
  });

  it('stops services in reverse dependency order', async () => {
    const record = join(tmp, 'stop-order.txt');
    const svc = (id: string, dependsOn: string[]) =>
      node(id, 'run.mjs', ['--name', id, '--record', record, '--term-delay', '150'], { dependsOn });
    const graph = [svc('a', []), svc('b', ['a']), svc('c', ['a']), svc('d', ['b']), svc('e', [])];
    const { sup } = supervise(graph);
    sup.start();
    await waitFor('all ready', () => graph.every(({ id }) => sup.logs(id).length > 0));

    await sup.stop();
    const lines = readFileSync(record, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(10);
    for (const { id, dependsOn } of graph) {
      for (const dep of dependsOn) expect(lines.indexOf(`${id} EXIT`)).toBeLessThan(lines.indexOf(`${dep} TERM`));
    }
    // Independent services are stopped at once, not one after the other.
    expect(lines.slice(0, 3).sort()).toEqual(['c TERM', 'd TERM', 'e TERM']);
    expect(sup.list().every((s) => s.state === 'Finished' && s.pid === undefined)).toBe(true);
  });

  it('stopAfter orders the stop only: both start at once, and the one that must outlive the other stops after it', async () => {
    const record = join(tmp, 'stop-after.txt');
    const svc = (id: string, extra: Partial<ServiceSpec>) => node(id, 'run.mjs', ['--name', id, '--record', record, '--term-delay', '150'], extra);
    const { sup, seen } = supervise([svc('api', {}), svc('net', { stopAfter: ['api'] })]);
    sup.start();
    // No start dependency: net does not wait for api.
    expect(seen.filter((e) => e.id === 'net' && /Waiting for/.test(e.message))).toEqual([]);
    await waitFor('both ready', () => sup.logs('api').length > 0 && sup.logs('net').length > 0);
    await sup.stop();
    const lines = readFileSync(record, 'utf8').trim().split('\n');
    expect(lines.indexOf('api EXIT')).toBeLessThan(lines.indexOf('net TERM'));
    expect(() => new Supervisor([svc('x', { stopAfter: ['y'] })])).toThrow(/stops after unknown service y/);
    expect(() => new Supervisor([svc('x', { stopAfter: ['y'] }), svc('y', { stopAfter: ['x'] })])).toThrow(/cycle/);
  });

  it('escalates to SIGKILL after stopTimeout when SIGTERM is ignored, and does not restart', async () => {
    const { sup } = supervise(
      [node('stubborn', 'ignore-term.mjs', [], { stopTimeout: 400 }), node('polite', 'run.mjs', [], { stopTimeout: 400 })],
      { backoffBase: 20 },
    );
    sup.start();
    await waitFor('ready', () => sup.logs('stubborn').includes('ready') && sup.logs('polite').length > 0);
    const pid = sup.get('stubborn')!.pid!;

    let t0 = Date.now();
    await sup.stopService('polite');
    expect(Date.now() - t0).toBeLessThan(300);

    t0 = Date.now();
    await sup.stopService('stubborn');
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(398);
    expect(took).toBeLessThan(400 + 1000);
    expect(alive(pid)).toBe(false);
    await waitFor('SIGTERM logged', () => sup.logs('stubborn').includes('got SIGTERM, ignoring it'));
    const messages = sup.get('stubborn')!.events.map((ev) => ev.message);
    expect(messages).toContain('Still running 400ms after SIGTERM: sent SIGKILL');
    expect(messages.at(-1)).toBe('Stopped: process killed by signal SIGKILL');

    await sleep(100); // five backoff periods: a restart would have happened by now
    for (const id of ['stubborn', 'polite']) {
      expect(sup.get(id)!.state).toBe('Finished');
      expect(sup.get(id)!.restarts).toBe(0);
    }
    expect(sup.pids().size).toBe(0);
  });

  it('a health check failing while the service is being stopped is not reported (issue 17: noise at every shutdown)', async () => {
    const socket = join(tmp, 'slow-stop.sock');
    const { sup, seen } = supervise([node('svc', 'slow-stop.mjs', [socket, '500'], { healthCheck: canConnect(socket), healthInterval: 40, stopTimeout: 2000 })]);
    sup.start();
    await waitFor('healthy', () => sup.get('svc')!.healthy === true);
    await sup.stopService('svc');
    const from = seen.findIndex((ev) => ev.id === 'svc' && /^Stopping/.test(ev.message));
    expect(from).toBeGreaterThanOrEqual(0);
    expect(seen.slice(from).map((ev) => ev.message).filter((m) => /Health check/.test(m))).toEqual([]);
    expect(sup.get('svc')!.events.at(-1)!.message).toBe('Stopped: process exited with code 0');
  });

  it('does not restart a service that dies while the supervisor is stopping', async () => {
    const { sup, seen } = supervise(
      [node('a', 'run.mjs'), node('b', 'run.mjs', ['--term-delay', '300'], { dependsOn: ['a'] })],
      { backoffBase: 20 },
    );
    sup.start();
    await waitFor('ready', () => sup.logs('a').length > 0 && sup.logs('b').length > 0);
    const aPid = sup.get('a')!.pid!;

    const stopping = sup.stop();
    await waitFor('b stopping', () => sup.get('b')!.events.at(-1)!.message.startsWith('Stopping'));
    const since = seen.length;
    process.kill(aPid, 'SIGKILL'); // a crashes while b is still stopping
    await stopping;
    await sleep(100);

    expect(seen.slice(since).filter((ev) => ev.id === 'a').map((ev) => ev.message)).toEqual([
      'Stopped: process killed by signal SIGKILL',
    ]);
    expect(sup.get('a')!.restarts).toBe(0);
    expect(sup.get('b')!.events.at(-1)!.message).toBe('Stopped: process exited with code 0');
    expect(sup.pids().size).toBe(0);
  });

  it('captures stdout and stderr lines into a bounded ring buffer', async () => {
    const logged: string[] = [];
    const { sup } = supervise([node('chatty', 'chatty.mjs', ['30', '10'], { restart: 'never' })], {
      logLines: 25,
      log: (msg) => logged.push(msg),
    });
    const followed: string[] = [];
    const ignored: string[] = [];
    sup.followLogs('chatty', (line) => followed.push(line));
    const unsubscribe = sup.followLogs('chatty', (line) => ignored.push(line));
    unsubscribe();
    sup.start();
    await waitFor('all lines', () => followed.length === 41);
    await waitFor('finished', () => sup.get('chatty')!.state === 'Finished');

    expect(followed.filter((l) => l.startsWith('out'))).toEqual(Array.from({ length: 30 }, (_, i) => `out ${i + 1}`));
    expect(followed.filter((l) => l.startsWith('err'))).toEqual(Array.from({ length: 10 }, (_, i) => `err ${i + 1}`));
    expect(followed).toContain('tail'); // the last line has no newline
    expect(sup.logs('chatty')).toEqual(followed.slice(-25));
    expect(logged).toEqual(followed.map((line) => `chatty: ${line}`));
    expect(ignored).toEqual([]);
    expect(() => sup.logs('nope')).toThrow('unknown service: nope');
  });

  it('starts, stops and restarts single services', async () => {
    const { sup } = supervise([node('a', 'run.mjs'), node('b', 'run.mjs', [], { dependsOn: ['a'] })]);
    await sup.startService('a');
    expect(sup.get('a')!.state).toBe('Running');
    expect(sup.get('b')!.state).toBe('Waiting'); // dependencies are not started for you, nor dependents
    expect(sup.get('b')!.events).toEqual([]);
    await waitFor('a ready', () => sup.logs('a').length > 0);
    const first = sup.get('a')!.pid;

    await sup.restartService('a');
    const second = sup.get('a')!.pid;
    expect(sup.get('a')!.state).toBe('Running');
    expect(second).not.toBe(first);
    expect(alive(first!)).toBe(false);

    await sup.startService('b');
    await sup.stopService('a'); // dependents are not stopped with it
    expect(sup.get('a')!.state).toBe('Finished');
    expect(sup.get('b')!.state).toBe('Running');
    await expect(sup.startService('nope')).rejects.toThrow('unknown service: nope');
  });
});

describe('adopting processes started before the supervisor (machined as PID 1, early.ts)', () => {
  // As early.ts hands them over: the child, and its output through streams of our own.
  const early = (script: string, args: string[] = []) => {
    const child = spawn(process.execPath, [join(fixtures, script), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    child.stdout.pipe(stdout);
    child.stderr.pipe(stderr);
    return { child, stdout, stderr };
  };

  it('takes the running process over as the first run: no second spawn, its output captured, counted in pids()', async () => {
    const e = early('run.mjs');
    const child = e.child;
    const { sup, seen } = supervise([node('a', 'run.mjs')], { adopt: new Map([['a', e]]) });
    expect(sup.pids().has(child.pid!)).toBe(true); // before start: the reaper must leave it alone
    sup.start();
    await waitFor('a running', () => sup.get('a')?.state === 'Running');
    expect(sup.get('a')!.pid).toBe(child.pid);
    expect(seen.filter((e) => e.id === 'a').map((e) => e.message)).toContainEqual(expect.stringMatching(/^Taking over .* \(pid \d+\), started before the supervisor$/));
    await sup.stopService('a');
    expect(child.exitCode !== null || child.signalCode !== null).toBe(true);
  });

  it('reports a process that ended before it was taken over, with its output, and restarts it by itself', async () => {
    const e = early('crash.mjs', ['0', '3']);
    const child = e.child;
    await new Promise((resolve) => child.once('exit', resolve));
    const { sup, seen } = supervise([node('a', 'run.mjs')], { adopt: new Map([['a', e]]), backoffBase: 10 });
    sup.start();
    await waitFor('a restarted', () => sup.get('a')?.state === 'Running' && sup.get('a')!.pid !== child.pid);
    expect(seen.some((e) => e.id === 'a' && /exit code 3|exited with code 3|code 3/.test(e.message))).toBe(true);
    await waitFor('its output', () => sup.logs('a').some((l) => l.includes('exiting with 3')));
  });

  it('an adopted process\'s READY=1, written before the takeover, counts once it is taken over', async () => {
    const child = spawn(process.execPath, [join(fixtures, 'notify-ready.mjs'), '0'], { stdio: READY_STDIO, env: withReadyFd({ ...(process.env as Record<string, string>) }) });
    const [stdout, stderr, ready] = [new PassThrough(), new PassThrough(), new PassThrough()];
    child.stdout!.pipe(stdout);
    child.stderr!.pipe(stderr);
    (child.stdio[3] as import('node:stream').Readable).pipe(ready);
    await new Promise<void>((resolve) => stdout.once('data', () => resolve())); // it has told
    const check = async () => {
      throw new Error('never');
    };
    const { sup } = supervise([node('a', 'notify-ready.mjs', ['0'], { healthCheck: check, healthInterval: 5000, notifiesReady: true })], { adopt: new Map([['a', { child, stdout, stderr, ready }]]) });
    sup.start();
    await waitFor('a healthy', () => sup.get('a')!.healthy === true);
    expect(sup.get('a')!.pid).toBe(child.pid);
    expect(sup.get('a')!.lastHealthMessage).toBe(READY_MESSAGE);
  });

  it('refuses a process for a service it does not know', () => {
    const e = early('run.mjs');
    try {
      expect(() => new Supervisor([node('a', 'run.mjs')], { adopt: new Map([['b', e]]) })).toThrow(/unknown service b/);
    } finally {
      e.child.kill();
    }
  });
});

describe('prepare (pre state)', () => {
  it('stays Preparing with what prepare reports, then starts with the arguments it returns', async () => {
    const rec = join(tmp, 'prepare-args.log');
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { sup, seen } = supervise([
      node('pre', 'run.mjs', ['--name', 'wrong'], {
        prepare: async (_signal, report) => {
          report('Waiting for bootstrap');
          await gate;
          return { args: [join(fixtures, 'run.mjs'), '--name', 'prepared', '--record', rec] };
        },
      }),
    ]);
    sup.start();
    await waitFor('the reported message', () => seen.some((e) => e.state === 'Preparing' && e.message === 'Waiting for bootstrap'));
    expect(sup.get('pre')!.state).toBe('Preparing');
    expect(sup.get('pre')!.pid).toBeUndefined();
    release();
    await waitFor('running', () => sup.get('pre')!.state === 'Running');
    await waitFor('its first line', () => sup.logs('pre').length > 0);
    await sup.stopService('pre');
    expect(readFileSync(rec, 'utf8')).toContain('prepared TERM');
  });

  it('a stop aborts a prepare that waits, and nothing starts', async () => {
    let aborted = false;
    const { sup } = supervise([
      node('pre', 'run.mjs', [], {
        prepare: (signal) =>
          new Promise((_resolve, reject) =>
            signal.addEventListener('abort', () => {
              aborted = true;
              reject(new Error('aborted'));
            }),
          ),
      }),
    ]);
    sup.start();
    await waitFor('preparing', () => sup.get('pre')!.state === 'Preparing');
    await sup.stopService('pre');
    expect(aborted).toBe(true);
    await sleep(100);
    expect(sup.get('pre')!.state).toBe('Finished');
    expect(sup.get('pre')!.pid).toBeUndefined();
  });

  it('a failing prepare is a failed start: restarted with backoff, prepare runs again', async () => {
    let calls = 0;
    const { sup, seen } = supervise(
      [
        node('pre', 'run.mjs', [], {
          prepare: async () => {
            if (++calls < 2) throw new Error('no members reachable');
          },
        }),
      ],
      { backoffBase: 50 },
    );
    sup.start();
    await waitFor('running after a retry', () => sup.get('pre')!.state === 'Running');
    expect(calls).toBe(2);
    expect(seen.some((e) => e.message.includes('pre state: no members reachable'))).toBe(true);
  });
});

describe('placement (cgroups and OOM score, machined as PID 1)', () => {
  it('hears of every process as it starts, spawned, restarted or taken over; a throwing one is only logged', async () => {
    const early = spawn(process.execPath, [join(fixtures, 'run.mjs')], { stdio: ['ignore', 'pipe', 'pipe'] });
    const [stdout, stderr] = [new PassThrough(), new PassThrough()];
    early.stdout.pipe(stdout);
    early.stderr.pipe(stderr);
    const placed: Array<[number, string]> = [];
    const logged: string[] = [];
    const { sup } = supervise([node('a', 'run.mjs'), node('b', 'crash.mjs', ['0', '1'])], {
      adopt: new Map([['a', { child: early, stdout, stderr }]]),
      backoffBase: 10,
      log: (m) => logged.push(m),
      placement: (pid, id) => {
        placed.push([pid, id]);
        if (id === 'b') throw new Error('no cgroup');
      },
    });
    sup.start();
    await waitFor('a running', () => sup.get('a')?.state === 'Running');
    await waitFor('b restarted', () => placed.filter(([, id]) => id === 'b').length >= 2);
    expect(placed[0]).toEqual([early.pid, 'a']);
    expect(new Set(placed.filter(([, id]) => id === 'b').map(([pid]) => pid)).size).toBeGreaterThanOrEqual(2);
    expect(logged.some((m) => /placing b \(pid \d+\): no cgroup/.test(m))).toBe(true);
  });
});
