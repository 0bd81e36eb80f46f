// machined's API end to end on this host: a real Supervisor with two real child processes, a
// MemoryState fed by the real ServiceController, an EventBus, the server on a unix socket in
// a temporary BRONZE_RUN_DIR, and a real grpc-js client. /proc is the host's.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceClient } from '../../contract/protos.ts';
import { healthChecker } from '../../daemon/health-client.ts';
import { ControllerRuntime } from '../../state/controller.ts';
import { DefinitionRegistry } from '../../contract/resources/registry.ts';
import { publishDefinitions } from '../meta.ts';
import { MemoryState } from '../../state/memory.ts';
import { serviceController } from '../controllers/services.ts';
import { Supervisor } from '../supervisor/supervisor.ts';
import { EventBus, decodeWireEvent, mirrorServiceEvents } from './events.ts';
import type { LogSource } from './logs.ts';
import type { PowerSequence } from './power.ts';
import { type MachinedApi, startMachinedApi } from './server.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../../../test/fixtures');
const TICKER = path.join(FIXTURES, 'machined-api/ticker.mjs');
const RUN = path.join(FIXTURES, 'supervisor/run.mjs');

/** machined's own log, as KmsgLogger offers it (without writing to the console). */
class RingLog implements LogSource {
  readonly ring: string[] = [];
  readonly followers = new Set<(line: string) => void>();
  lines = () => [...this.ring];
  follow = (fn: (line: string) => void) => {
    this.followers.add(fn);
    return () => void this.followers.delete(fn);
  };
  info(msg: string) {
    const line = `${new Date().toISOString()} info: ${msg}`;
    this.ring.push(line);
    for (const f of this.followers) f(line);
  }
}

type AnyClient = grpc.Client & Record<string, (...args: any[]) => any>;

function unary<T = any>(client: AnyClient, method: string, req: object = {}): Promise<T> {
  return new Promise((resolve, reject) => client[method]!(req, (err: grpc.ServiceError | null, res: T) => (err ? reject(err) : resolve(res))));
}

/** Reads a server stream to its end. */
function collect<T = any>(client: AnyClient, method: string, req: object = {}): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const out: T[] = [];
    const call = client[method]!(req) as grpc.ClientReadableStream<T>;
    call.on('data', (m: T) => out.push(m));
    call.on('error', reject);
    call.on('end', () => resolve(out));
  });
}

/** An open server stream: messages so far, waiting for one that matches, cancelling. */
function open<T = any>(client: AnyClient, method: string, req: object = {}) {
  const messages: T[] = [];
  const call = client[method]!(req) as grpc.ClientReadableStream<T>;
  let error: grpc.ServiceError | undefined;
  const waiters = new Set<() => void>();
  call.on('data', (m: T) => {
    messages.push(m);
    for (const w of [...waiters]) w();
  });
  call.on('error', (e: grpc.ServiceError) => {
    error = e;
    for (const w of [...waiters]) w();
  });
  return {
    messages,
    get error() {
      return error;
    },
    until(what: string, ok: (msgs: T[]) => boolean, timeoutMs = 8000): Promise<void> {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (ok(messages)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve();
          } else if (error) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(error);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${what}; got ${messages.length} messages`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    cancel: () => call.cancel(),
  };
}

describe('machined API over a real unix socket', () => {
  let dir: string;
  let filesDir: string;
  let supervisor: Supervisor;
  let runtime: ControllerRuntime;
  let api: MachinedApi;
  let machine: AnyClient;
  let cosi: AnyClient;
  const log = new RingLog();
  const events = new EventBus();
  const sequences: Array<{ seq: PowerSequence; reason: string; actorId: string; at: number }> = [];
  let stopMirror: () => void;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-machined-api-'));
    process.env.BRONZE_RUN_DIR = path.join(dir, 'run');
    filesDir = path.join(dir, 'files');
    fs.mkdirSync(path.join(filesDir, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(filesDir, 'hello.txt'), 'hello, bronze\n');
    fs.writeFileSync(path.join(filesDir, 'sub/inner.txt'), 'inner');

    supervisor = new Supervisor(
      [
        { id: 'ticker', dependsOn: [], command: process.execPath, args: [TICKER, '100'], healthCheck: async () => {}, healthInterval: 200, stopTimeout: 2000 },
        { id: 'sleeper', dependsOn: ['ticker'], command: process.execPath, args: [RUN, '--name', 'sleeper'], stopTimeout: 2000 },
      ],
      { backoffBase: 100 },
    );
    stopMirror = mirrorServiceEvents(supervisor, events);
    supervisor.on('event', (id: string, ev: { state: string; message: string }) => log.info(`service ${id}: ${ev.state}: ${ev.message}`));

    const state = new MemoryState();
    const registry = new DefinitionRegistry();
    await publishDefinitions(state, registry);
    runtime = new ControllerRuntime(state, { log: { info() {}, warn() {}, error() {} } });
    runtime.register(serviceController(supervisor));
    runtime.start();

    events.publishSequence('boot', 'START');
    supervisor.start();
    const deadline = Date.now() + 10_000;
    while (!supervisor.list().every((s) => s.state === 'Running' && s.pid)) {
      if (Date.now() > deadline) throw new Error(`services did not start: ${JSON.stringify(supervisor.list().map((s) => [s.id, s.state]))}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    events.publishSequence('boot', 'STOP');

    api = await startMachinedApi({
      supervisor,
      log,
      events,
      state,
      registry,
      powerDelayMs: 50,
      requestSequence: (seq, reason, actorId) => void sequences.push({ seq, reason, actorId, at: Date.now() }),
    });
    const creds = grpc.credentials.createInsecure();
    machine = new (serviceClient('machine.MachineService'))(`unix:${api.socket}`, creds) as unknown as AnyClient;
    cosi = new (serviceClient('cosi.resource.State'))(`unix:${api.socket}`, creds) as unknown as AnyClient;
  });

  afterAll(async () => {
    machine?.close();
    cosi?.close();
    await api?.close();
    await runtime?.stop();
    stopMirror?.();
    await supervisor?.stop();
    delete process.env.BRONZE_RUN_DIR;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('listens on <run dir>/machined/machined.sock (0666: callers are told apart by their uid) and answers health checks', async () => {
    expect(api.socket).toBe(path.join(dir, 'run', 'machined', 'machined.sock'));
    expect(fs.statSync(api.socket).mode & 0o777).toBe(0o666);
    const h = healthChecker(api.socket);
    await h.check();
    h.close();
  });

  it('Version, without metadata (apid stamps it)', async () => {
    const reply = await unary(machine, 'Version');
    expect(reply.messages).toHaveLength(1);
    expect(reply.messages[0].metadata).toBeNull();
    expect(reply.messages[0].version.os).toBe('linux');
  });

  it('Hostname, Memory, LoadAvg, SystemStat, CPUInfo from the real /proc', async () => {
    expect((await unary(machine, 'Hostname')).messages[0].hostname).toBe(os.hostname());
    const mem = (await unary(machine, 'Memory')).messages[0].meminfo;
    expect(Number(mem.memtotal)).toBe(Math.round(os.totalmem() / 1024));
    expect(Number(mem.memavailable)).toBeGreaterThan(0);
    expect(Number(mem.memavailable)).toBeLessThanOrEqual(Number(mem.memtotal));
    expect((await unary(machine, 'LoadAvg')).messages[0].load1).toBeGreaterThanOrEqual(0);
    const stat = (await unary(machine, 'SystemStat')).messages[0];
    expect(stat.cpu).toHaveLength(os.cpus().length);
    expect(Math.abs(Number(stat.boot_time) - (Date.now() / 1000 - os.uptime()))).toBeLessThan(5);
    expect(stat.cpu_total.user).toBeGreaterThan(0);
    const cpus = (await unary(machine, 'CPUInfo')).messages[0].cpu_info;
    expect(cpus).toHaveLength(os.cpus().length);
    expect(cpus[0].model_name).toBe(os.cpus()[0]!.model);
  });

  it('DiskStats, NetworkDeviceStats, Mounts from the real /proc', async () => {
    const net = (await unary(machine, 'NetworkDeviceStats')).messages[0];
    expect(net.devices.map((d: { name: string }) => d.name)).toContain('lo');
    expect(net.total.name).toBe('total');
    const disks = (await unary(machine, 'DiskStats')).messages[0];
    expect(disks.total.name).toBe('total');
    const mounts = (await unary(machine, 'Mounts')).messages[0].stats;
    const root = mounts.find((m: { mounted_on: string }) => m.mounted_on === '/');
    expect(root).toBeDefined();
    expect(Number(root.size)).toBeGreaterThan(0);
    expect(mounts.find((m: { mounted_on: string }) => m.mounted_on === '/proc')).toBeDefined();
  });

  it('Processes: this process and the supervised ones with plausible values', async () => {
    const procs = (await unary(machine, 'Processes')).messages[0].processes;
    const me = procs.find((p: { pid: number }) => p.pid === process.pid);
    expect(me).toBeDefined();
    expect(Number(me.resident_memory)).toBeGreaterThan(10 * 1024 * 1024);
    expect(Number(me.virtual_memory)).toBeGreaterThan(Number(me.resident_memory));
    expect(me.threads).toBeGreaterThan(1);
    expect(me.cpu_time).toBeGreaterThan(0);
    const ticker = procs.find((p: { pid: number }) => p.pid === supervisor.get('ticker')!.pid);
    expect(ticker).toMatchObject({ ppid: process.pid, state: expect.stringMatching(/^[RS]$/), command: expect.any(String) });
    expect(ticker.args).toContain('ticker.mjs');
  });

  it('ServiceList: machined and the supervised services in the Talos shape', async () => {
    const services = (await unary(machine, 'ServiceList')).messages[0].services;
    expect(services.map((s: { id: string }) => s.id)).toEqual(['machined', 'sleeper', 'ticker']);
    const ticker = services[2];
    expect(ticker.state).toBe('Running');
    expect(ticker.health).toMatchObject({ unknown: false, healthy: true, last_message: 'Health check successful' });
    expect(Number(ticker.health.last_change.seconds)).toBeGreaterThan(0);
    expect(ticker.events.events.map((e: { state: string }) => e.state)).toContain('Running');
    expect(ticker.events.events.find((e: { msg: string }) => e.msg.startsWith('Process started'))).toBeDefined();
    expect(services[1].health.unknown).toBe(true); // no health check
  });

  it('Logs: the tail of a service, machined\'s own log, NOT_FOUND for an unknown id', async () => {
    const lines = (await collect(machine, 'Logs', { namespace: 'system', id: 'ticker', tail_lines: -1 })).map((d) => d.bytes.toString());
    expect(lines[0]).toBe('ticker ready\n');
    // The ticker prints a line now and then; under load it may not have printed two yet.
    for (let i = 0; i < 50 && (await collect(machine, 'Logs', { id: 'ticker', tail_lines: -1 })).length < 2; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await collect(machine, 'Logs', { id: 'ticker', tail_lines: 2 })).toHaveLength(2);
    const own = (await collect(machine, 'Logs', { id: 'machined', tail_lines: -1 })).map((d) => d.bytes.toString()).join('');
    expect(own).toContain('service ticker: Running');
    await expect(collect(machine, 'Logs', { id: 'kubelet', tail_lines: -1 })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND, details: expect.stringContaining('kubelet') });
  });

  it('Logs with follow: a new line arrives, then the client cancels', async () => {
    const s = open<{ bytes: Buffer }>(machine, 'Logs', { id: 'ticker', tail_lines: 1, follow: true });
    await s.until('the last line', (m) => m.length >= 1);
    const first = s.messages[0]!.bytes.toString();
    await s.until('a new line', (m) => m.length >= 2);
    const second = s.messages[1]!.bytes.toString();
    expect(Number(second.match(/tick (\d+)/)?.[1])).toBeGreaterThan(Number(first.match(/tick (\d+)/)?.[1] ?? 0));
    s.cancel();
    await expect(s.until('cancelled', () => false, 2000)).rejects.toMatchObject({ code: grpc.status.CANCELLED });
  });

  it('Events: history, then live events from restarting a service; ServiceRestart gives it a new pid; Watch sees the update', async () => {
    const oldPid = supervisor.get('sleeper')!.pid!;
    const ev = open(machine, 'Events', { tail_events: -1 });
    const watch = open(cosi, 'Watch', { namespace: 'runtime', type: 'svc', id: 'sleeper', api_version: 1 });
    const decoded = () => ev.messages.map((m) => ({ id: m.id, ...decodeWireEvent(m) }));
    await ev.until('history', (m) => m.length >= events.history().length);
    const history = decoded();
    expect(history[0]).toMatchObject({ type: 'machine.SequenceEvent', data: { sequence: 'boot', action: 'START' } });
    expect(history.some((e) => e.type === 'machine.ServiceStateEvent' && e.data.service === 'ticker' && e.data.action === 'RUNNING')).toBe(true);
    expect([...history.map((e) => e.id)].sort()).toEqual(history.map((e) => e.id));
    await watch.until('bootstrap', (m) => m.some((r) => r.event[0].event_type === 'BOOTSTRAPPED'));
    expect(YAML.parse(watch.messages[0].event[0].resource.spec.yaml_spec)).toEqual({ running: true, healthy: false, unknown: true });

    const reply = await unary(machine, 'ServiceRestart', { id: 'sleeper' });
    expect(reply.messages[0].resp).toBe('Service "sleeper" restarted');
    const newPid = supervisor.get('sleeper')!.pid!;
    expect(newPid).toBeGreaterThan(0);
    expect(newPid).not.toBe(oldPid);

    const live = () => decoded().slice(history.length);
    await ev.until('the new process event', () => live().some((e) => e.data.service === 'sleeper' && e.data.message === `Process started (pid ${newPid})`));
    expect(live().map((e) => e.data.action)).toContain('FINISHED');
    await watch.until('stopped and running again', (m) => {
      const specs = m.filter((r) => r.event[0].event_type === 'UPDATED').map((r) => YAML.parse(r.event[0].resource.spec.yaml_spec).running);
      return specs.includes(false) && specs.at(-1) === true;
    });
    ev.cancel();
    watch.cancel();
  });

  it('ServiceStop and ServiceStart; unknown service NOT_FOUND', async () => {
    expect((await unary(machine, 'ServiceStop', { id: 'sleeper' })).messages[0].resp).toBe('Service "sleeper" stopped');
    expect(supervisor.get('sleeper')!.state).toBe('Finished');
    expect((await unary(machine, 'ServiceStart', { id: 'sleeper' })).messages[0].resp).toBe('Service "sleeper" started');
    expect(supervisor.get('sleeper')!.state).toBe('Running');
    await expect(unary(machine, 'ServiceStart', { id: 'nope' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it('cosi List of "services" by alias; Get; writes refused', async () => {
    const list = await collect(cosi, 'List', { namespace: 'runtime', type: 'services' });
    expect(list.map((r) => r.resource.metadata.id)).toEqual(['machined', 'sleeper', 'ticker']);
    expect(list[2].resource.metadata).toMatchObject({ type: 'Services.v1alpha1.talos.dev', owner: 'ServiceController', phase: 'running' });
    expect(YAML.parse(list[2].resource.spec.yaml_spec)).toEqual({ running: true, healthy: true, unknown: false });
    const got = await unary(cosi, 'Get', { namespace: 'runtime', type: 'svc', id: 'ticker' });
    expect(got.resource.metadata.id).toBe('ticker');
    await expect(unary(cosi, 'Get', { namespace: 'runtime', type: 'svc', id: 'nope' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    const kind = open(cosi, 'Watch', { namespace: 'runtime', type: 'Service', options: { bootstrap_contents: true }, api_version: 1 });
    await kind.until('bootstrapped', (m) => m.some((r) => r.event[0].event_type === 'BOOTSTRAPPED'));
    expect(kind.messages.map((r) => [r.event[0].event_type, r.event[0].resource?.metadata.id])).toEqual([
      ['CREATED', 'machined'],
      ['CREATED', 'sleeper'],
      ['CREATED', 'ticker'],
      ['BOOTSTRAPPED', undefined],
    ]);
    kind.cancel();
    await expect(unary(cosi, 'Destroy', { namespace: 'runtime', type: 'svc', id: 'ticker' })).rejects.toMatchObject({
      code: grpc.status.PERMISSION_DENIED,
      details: 'resources are read-only through the API',
    });
  });

  it('List and Read of a directory', async () => {
    const infos = await collect(machine, 'List', { root: filesDir, recurse: true });
    expect(infos.map((i) => i.relative_name)).toEqual(['.', 'hello.txt', 'sub', 'sub/inner.txt']);
    expect(infos[1]).toMatchObject({ name: path.join(filesDir, 'hello.txt'), size: '14', is_dir: false });
    expect(infos[2].is_dir).toBe(true);
    const data = await collect(machine, 'Read', { path: path.join(filesDir, 'hello.txt') });
    expect(Buffer.concat(data.map((d) => d.bytes)).toString()).toBe('hello, bronze\n');
    await expect(collect(machine, 'Read', { path: path.join(filesDir, 'nope') })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    await expect(collect(machine, 'List', { root: path.join(filesDir, 'nope') })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it('Dmesg: the kernel log, or a clear error where it cannot be read', async () => {
    let readable = true;
    try {
      fs.closeSync(fs.openSync('/dev/kmsg', fs.constants.O_RDONLY | fs.constants.O_NONBLOCK));
    } catch {
      readable = false;
    }
    if (readable) {
      const lines = await collect(machine, 'Dmesg', {});
      expect(lines.length).toBeGreaterThan(0);
      expect(lines[0].bytes.toString()).toMatch(/^[a-z0-9-]+: +[a-z]+: \[.+Z\]: /);
    } else {
      await expect(collect(machine, 'Dmesg', {})).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE, details: expect.stringContaining('/dev/kmsg') });
    }
  });

  it('without a configuration or a lifecycle: GenerateClientConfiguration, Upgrade, Reset UNAVAILABLE; EtcdSnapshot UNIMPLEMENTED', async () => {
    await expect(unary(machine, 'GenerateClientConfiguration', { roles: ['os:admin'] })).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
      details: 'no machine configuration yet',
    });
    await expect(unary(machine, 'Upgrade', { image: 'https://example.com/bronze.tar' })).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
      details: 'this node cannot install or upgrade',
    });
    await expect(unary(machine, 'Reset', {})).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE, details: 'this node cannot reset or roll back' });
    await expect(collect(machine, 'EtcdSnapshot', {})).rejects.toMatchObject({ code: grpc.status.UNIMPLEMENTED });
  });

  it('Reboot replies first, then requests the sequence with the reply\'s actor id', async () => {
    const reply = await unary(machine, 'Reboot', {});
    const repliedAt = Date.now();
    expect(sequences).toEqual([]);
    const actorId = reply.messages[0].actor_id;
    expect(actorId).toMatch(/^[0-9a-f-]{36}$/);
    const deadline = Date.now() + 2000;
    while (sequences.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(sequences).toEqual([{ seq: 'reboot', reason: 'API Reboot request', actorId, at: expect.any(Number) }]);
    expect(sequences[0]!.at).toBeGreaterThanOrEqual(repliedAt);
  });
});

describe('a second server: GenerateClientConfiguration, close()', () => {
  it('answers GenerateClientConfiguration from its dep; close() ends endless streams and removes the socket', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-machined-close-'));
    try {
      const registry = new DefinitionRegistry();
      const api = await startMachinedApi({
        supervisor: new Supervisor([]),
        log: new RingLog(),
        events: new EventBus(),
        state: new MemoryState(),
        registry,
        requestSequence: () => {},
        socket: path.join(dir, 'machined.sock'),
        generateClientConfiguration: async (req) => ({
          ca: Buffer.from('CA'),
          crt: Buffer.from('CRT'),
          key: Buffer.from('KEY'),
          talosconfig: Buffer.from(`roles: ${req.roles.join(',')} ttl: ${req.crt_ttl?.seconds}`),
        }),
      });
      const client = new (serviceClient('machine.MachineService'))(`unix:${api.socket}`, grpc.credentials.createInsecure()) as unknown as AnyClient;
      const gen = await unary(client, 'GenerateClientConfiguration', { roles: ['os:reader'], crt_ttl: { seconds: 3600 } });
      expect(gen.messages).toHaveLength(1);
      expect(gen.messages[0].ca.toString()).toBe('CA');
      expect(gen.messages[0].talosconfig.toString()).toBe('roles: os:reader ttl: 3600');
      const s = open(client, 'Logs', { id: 'machined', tail_lines: -1, follow: true });
      await expect(unary(client, 'ServiceList')).resolves.toMatchObject({ messages: [{ services: [{ id: 'machined' }] }] });
      const t0 = Date.now();
      await api.close();
      expect(Date.now() - t0).toBeLessThan(3000);
      await expect(s.until('the end', () => false, 2000)).rejects.toMatchObject({ code: expect.any(Number) });
      expect(fs.existsSync(api.socket)).toBe(false);
      client.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
