// machined's socket tells its callers apart by their uid (SO_PEERCRED): real client processes
// run as apid's, trustd's and timed's uids and as a stranger's, against the real server on a
// real unix socket. Needs root (to run the clients as other users), as on a node.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DefinitionRegistry } from '../../contract/resources/registry.ts';
import { DAEMON_USERS } from '../../lib/daemon-users.ts';
import { MemoryState } from '../../state/memory.ts';
import { publishDefinitions } from '../meta.ts';
import { Supervisor } from '../supervisor/supervisor.ts';
import { CALLER_POLICIES, callerClass, refusal } from './callers.ts';
import { EventBus } from './events.ts';
import { type MachinedApi, startMachinedApi } from './server.ts';

const CALLER = path.resolve(import.meta.dirname, '../../../test/fixtures/machined-api/caller.mjs');
const isRoot = process.getuid?.() === 0;

const md = (o: Record<string, string>) => {
  const m = new grpc.Metadata();
  for (const [k, v] of Object.entries(o)) m.set(k, v);
  return m;
};

describe('caller classes', () => {
  it('by uid: root and machined\'s own uid are local; apid, trustd, timed by their numbers; anyone else none', () => {
    expect(callerClass(0, 0)).toBe('local');
    expect(callerClass(1000, 1000)).toBe('local');
    expect(callerClass(50, 0)).toBe('apid');
    expect(callerClass(51, 0)).toBe('trustd');
    expect(callerClass(52, 0)).toBe('timed');
    expect(callerClass(60, 0)).toBeUndefined(); // etcd never calls machined
    expect(callerClass(1000, 0)).toBeUndefined();
  });

  it('apid must name roles except for the health check; trustd only Hello; timed writes only as timed', () => {
    expect(refusal('apid', '/machine.MachineService/Version', md({}))?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(refusal('apid', '/machine.MachineService/Version', md({ 'bronze-role': '' }))?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(refusal('apid', '/machine.MachineService/Version', md({ 'bronze-role': 'os:reader' }))).toBeUndefined();
    expect(refusal('apid', '/grpc.health.v1.Health/Check', md({}))).toBeUndefined();
    expect(refusal('trustd', '/bronze.cluster.Registry/Hello', md({}))).toBeUndefined();
    expect(refusal('trustd', '/machine.MachineService/Reset', md({}))?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(refusal('trustd', '/bronze.cluster.Registry/Hello', md({ 'bronze-role': 'os:admin' }))?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(refusal('timed', '/cosi.resource.State/Create', md({ 'bronze-owner': 'timed' }))).toBeUndefined();
    expect(refusal('timed', '/cosi.resource.State/Create', md({ 'bronze-owner': 'networkd' }))?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(refusal('local', '/machine.MachineService/Reset', md({}))).toBeUndefined();
    expect(CALLER_POLICIES.trustd.services).toEqual(['bronze.cluster.Registry']);
  });
});

describe.skipIf(!isRoot)('machined\'s socket by peer credentials', () => {
  let dir: string;
  let api: MachinedApi;
  let supervisor: Supervisor;
  const hellos: unknown[] = [];
  const refused: string[] = [];

  /** One call from a process running as `uid`. */
  function call(uid: number, method: string, metadata: Record<string, string> = {}): Promise<{ code: number; details?: string }> {
    return new Promise((resolve, reject) =>
      execFile(process.execPath, [CALLER, api.socket, method, JSON.stringify(metadata)], { uid, gid: uid, timeout: 15_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout.trim()) as { code: number; details?: string }),
      ),
    );
  }

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-callers-'));
    fs.chmodSync(dir, 0o711); // the other users reach the socket below it
    supervisor = new Supervisor([]);
    const state = new MemoryState();
    const registry = new DefinitionRegistry();
    await publishDefinitions(state, registry);
    api = await startMachinedApi({
      supervisor,
      log: { lines: () => [], follow: () => () => {} },
      events: new EventBus(),
      state,
      registry,
      requestSequence: () => {},
      clusterRegistry: {
        Hello: (c: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => {
          hellos.push(c.request);
          cb(null, {});
        },
      },
      socket: path.join(dir, 'run', 'machined', 'machined.sock'),
      onError: (m) => refused.push(m),
    });
  });

  afterAll(async () => {
    await api?.close();
    await supervisor?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('root: everything, without metadata, as before', async () => {
    expect(await call(0, '/machine.MachineService/Version')).toEqual({ code: 0 });
  });

  it('a stranger\'s uid: the connection is closed, and machined says whose', async () => {
    const r = await call(1234, '/machine.MachineService/Version');
    expect(r.code).toBe(grpc.status.UNAVAILABLE);
    expect(refused.join('\n')).toMatch(/refused a connection from pid \d+ \(uid 1234\)/);
    // etcd's uid has nothing to ask machined either
    expect((await call(DAEMON_USERS.etcd.uid, '/grpc.health.v1.Health/Check')).code).toBe(grpc.status.UNAVAILABLE);
  });

  it('apid\'s uid: refused without role metadata, served with it; its health check goes without', async () => {
    const apid = DAEMON_USERS.apid.uid;
    const bare = await call(apid, '/machine.MachineService/Version');
    expect(bare.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(bare.details).toMatch(/must name the caller's roles/);
    expect(await call(apid, '/machine.MachineService/Version', { 'bronze-role': 'os:reader' })).toEqual({ code: 0 });
    expect(await call(apid, '/grpc.health.v1.Health/Check')).toEqual({ code: 0 });
  });

  it('trustd\'s uid: the registry\'s Hello, and nothing else', async () => {
    const trustd = DAEMON_USERS.trustd.uid;
    const before = hellos.length;
    expect(await call(trustd, '/bronze.cluster.Registry/Hello')).toEqual({ code: 0 });
    expect(hellos.length).toBe(before + 1);
    for (const m of ['/machine.MachineService/Version', '/machine.MachineService/Reset', '/cosi.resource.State/Get', '/grpc.health.v1.Health/Check']) {
      expect((await call(trustd, m)).code, m).not.toBe(0);
    }
    expect((await call(trustd, '/machine.MachineService/Version', { 'bronze-role': 'os:admin' })).code).not.toBe(0);
  });

  it('timed\'s uid: the resource state, writing only as timed; not the machine API', async () => {
    const timed = DAEMON_USERS.timed.uid;
    // Reached the handler: it complains of the empty request, not of the caller.
    const get = await call(timed, '/cosi.resource.State/Get');
    expect(get.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect((await call(timed, '/cosi.resource.State/Create', { 'bronze-owner': 'networkd' })).code).toBe(grpc.status.PERMISSION_DENIED);
    expect((await call(timed, '/machine.MachineService/Version')).code).not.toBe(0);
    expect(await call(timed, '/grpc.health.v1.Health/Check')).toEqual({ code: 0 });
  });
});
