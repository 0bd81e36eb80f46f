// bronzectl's unary machine commands against a real mTLS server: output layout, NODE naming,
// `nodes` fan-out metadata, per-node errors with partial output, exit codes, endpoint failover.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { VERSION } from '../../../src/version.ts';
import { cli, deadEndpoint, grpcError, makePki, md, startApi, workspace, type FakeApi, type Pki, type Workspace } from './testing.ts';

let pki: Pki;
let api: FakeApi;
let ws: Workspace;

/** Replies per node as apid merges them: one item per node named in `nodes`, node03 failing. */
function perNode<T>(reqMd: grpc.Metadata, item: (node: string) => T) {
  const targets = reqMd.get('nodes').flatMap((v) => String(v).split(',')).map((v) => v.trim()).filter(Boolean);
  if (targets.length === 0) return { messages: [{ ...item(''), metadata: null }] };
  return {
    messages: targets.map((n) => (n === 'node03' ? { metadata: md(n, 'rpc error: code = Unavailable desc = connection refused') } : { ...item(n), metadata: md(n) })),
  };
}

const now = Math.floor(Date.now() / 1000);
const ts = (agoSeconds: number) => ({ seconds: String(now - agoSeconds), nanos: 0 });

beforeAll(async () => {
  pki = await makePki();
  api = await startApi(pki, {
    '/machine.MachineService/Version': {
      unary: (_r, m) =>
        perNode(m, () => ({ version: { tag: 'v0.1.0', sha: 'abc123', built: '2024-01-01T00:00:00Z', go_version: 'v24.21.0', os: 'linux', arch: 'amd64' }, features: { rbac: true } })),
    },
    '/machine.MachineService/Memory': {
      unary: (_r, m) => perNode(m, () => ({ meminfo: { memtotal: String(8128 * 1024), memfree: String(2048 * 1024), cached: String(1024 * 1024), buffers: String(64 * 1024), shmem: String(16 * 1024), memavailable: String(6000 * 1024) } })),
    },
    '/machine.MachineService/Processes': {
      unary: (_r, m) =>
        perNode(m, () => ({
          processes: [
            { pid: 1, ppid: 0, state: 'S', threads: 7, cpu_time: 1.5, virtual_memory: '1000000', resident_memory: '50000000', command: 'init', executable: '/sbin/init', args: 'init --x' },
            { pid: 2, ppid: 0, state: 'S', threads: 1, cpu_time: 0, virtual_memory: '0', resident_memory: '0', command: 'kthreadd', executable: '', args: '' },
          ],
        })),
    },
    '/machine.MachineService/Mounts': {
      unary: (_r, m) => perNode(m, () => ({ stats: [{ filesystem: '/dev/sda6', size: '10000000000', available: '7500000000', mounted_on: '/var' }, { filesystem: 'proc', size: '0', available: '0', mounted_on: '/proc' }] })),
    },
    '/machine.MachineService/ServiceList': {
      unary: (_r, m) =>
        perNode(m, () => ({
          services: [
            { id: 'trustd', state: 'Running', health: { unknown: false, healthy: false, last_message: 'dial failed' }, events: { events: [{ msg: 'Started', state: 'Running', ts: ts(30) }] } },
            { id: 'apid', state: 'Running', health: { unknown: false, healthy: true }, events: { events: [{ msg: 'Preparing', state: 'Preparing', ts: ts(4000) }, { msg: 'Health check successful', state: 'Running', ts: ts(3725) }] } },
          ],
        })),
    },
    '/machine.MachineService/ServiceRestart': { unary: (r, m) => perNode(m, () => ({ resp: `Service "${r.id}" restarted` })) },
    '/machine.MachineService/Reboot': { unary: (_r, m) => perNode(m, () => ({ actor_id: 'a1' })) },
    '/machine.MachineService/Shutdown': { unary: (_r, m) => perNode(m, () => ({ actor_id: 'a2' })) },
    '/time.TimeService/Time': { unary: (_r, m) => perNode(m, () => ({ server: 'pool.ntp.org', localtime: { seconds: '1700000000', nanos: 0 }, remotetime: { seconds: '1700000001', nanos: 0 } })) },
    '/machine.MachineService/Hostname': { unary: () => Promise.reject(grpcError(grpc.status.PERMISSION_DENIED, 'not authorized')) },
  });
  ws = await workspace(pki, [api.endpoint]);
});

afterAll(async () => {
  await api.close();
  await ws.cleanup();
});

const lastCall = (p: string) => api.calls.filter((c) => c.path === p).at(-1)!;

describe('version', () => {
  it('prints the Client:/Server: layout with NODE from the reply metadata', async () => {
    const r = await cli(ws, ['-n', '10.5.0.2', 'version']);
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      'Client:\n' +
        `\tTag:         ${VERSION.tag}\n` +
        `\tSHA:         ${VERSION.sha}\n` +
        `\tBuilt:       ${VERSION.built}\n` +
        `\tRuntime:     node ${process.version}\n` +
        `\tOS/Arch:     linux/${process.arch === 'x64' ? 'amd64' : process.arch}\n` +
        'Server:\n' +
        '\tNODE:        10.5.0.2\n' +
        '\tTag:         v0.1.0\n' +
        '\tSHA:         abc123\n' +
        '\tBuilt:       2024-01-01T00:00:00Z\n' +
        '\tRuntime:     node v24.21.0\n' +
        '\tOS/Arch:     linux/amd64\n' +
        '\tEnabled:     RBAC\n',
    );
    expect(lastCall('/machine.MachineService/Version').nodes).toEqual(['10.5.0.2']);
  });

  it('--client --short needs no server; without nodes the NODE is the endpoint', async () => {
    const calls = api.calls.length;
    const r = await cli(ws, ['version', '--client', '--short']);
    expect(r).toMatchObject({ code: 0, out: `Client:\nBronze ${VERSION.tag}\n` });
    expect(api.calls.length).toBe(calls);
    const s = await cli(ws, ['version']);
    expect(s.out).toContain(`\tNODE:        ${api.endpoint}\n`);
    expect(lastCall('/machine.MachineService/Version')).toMatchObject({ node: [], nodes: [] });
  });
});

describe('memory', () => {
  it('one row per node, fan-out with one `nodes` value each; a failed node is reported and fails the run', async () => {
    const r = await cli(ws, ['memory', '-n', 'node01,node02', '--nodes', 'node03']);
    expect(r.out).toBe(
      'NODE     TOTAL   USED   FREE   SHARED   BUFFERS   CACHE   AVAILABLE\n' +
        'node01   8128    4992   2048   16       64        1024    6000\n' +
        'node02   8128    4992   2048   16       64        1024    6000\n',
    );
    expect(r.err).toBe('node03: rpc error: code = Unavailable desc = connection refused\n');
    expect(r.code).toBe(1);
    expect(lastCall('/machine.MachineService/Memory')).toMatchObject({ node: [], nodes: ['node01', 'node02', 'node03'] });
  });

  it('uses the context nodes when -n is not given', async () => {
    const w2 = await workspace(pki, [api.endpoint], { nodes: ['node02'] });
    try {
      const r = await cli(w2, ['memory']);
      expect(r.code).toBe(0);
      expect(r.out.split('\n')[1]).toMatch(/^node02 /);
      expect(lastCall('/machine.MachineService/Memory').nodes).toEqual(['node02']);
    } finally {
      await w2.cleanup();
    }
  });
});

describe('processes, mounts, services, service, time', () => {
  it('processes: sorted by RSS, humanized sizes, executable substituted into args', async () => {
    const r = await cli(ws, ['-n', 'n1', 'ps']);
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      'NODE           PID   STATE   THREADS   CPU-TIME   VIRTMEM   RESMEM   COMMAND\n' +
        '          n1   1     S       7         1.50       1.0 MB    50 MB    /sbin/init --x\n' +
        '          n1   2     S       1         0.00       0 B       0 B      kthreadd\n',
    );
  });

  it('mounts: sizes in GB, percent used, zero-size file systems skipped', async () => {
    const r = await cli(ws, ['-n', 'n1', 'mounts']);
    expect(r.out).toBe(
      'NODE   FILESYSTEM   SIZE(GB)   USED(GB)   AVAILABLE(GB)   PERCENT USED   MOUNTED ON\n' + 'n1     /dev/sda6    10.00      2.50       7.50            25.00%         /var\n',
    );
  });

  it('services: sorted, health, last change and last event', async () => {
    const r = await cli(ws, ['-n', 'n1', 'services']);
    const lines = r.out.split('\n');
    expect(lines[0]).toBe('NODE   SERVICE   STATE     HEALTH   LAST CHANGE   LAST EVENT');
    expect(lines[1]).toMatch(/^n1 {5}apid {6}Running {3}OK {7}1h2m\d+s ago +Health check successful$/);
    expect(lines[2]).toMatch(/^n1 {5}trustd {4}Running {3}Fail {5}\d+s ago +Started$/);
  });

  it('service <id>: details with events newest first; unknown id fails', async () => {
    const r = await cli(ws, ['-n', 'n1', 'service', 'apid']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^NODE {5}n1\nID {7}apid\nSTATE {4}Running\nHEALTH {3}OK\nEVENTS {3}\[Running\]: Health check successful \(1h2m\d+s ago\)\n {9}\[Preparing\]: Preparing \(1h6m\d+s ago\)\n$/);
    const bad = await cli(ws, ['-n', 'n1', 'service', 'nope']);
    expect(bad).toMatchObject({ code: 1, err: 'n1: service "nope" is not registered\n' });
  });

  it('service <id> restart: NODE/RESPONSE table; a bad action is a usage error', async () => {
    const r = await cli(ws, ['-n', 'n1,n2', 'service', 'apid', 'restart']);
    expect(r.out).toBe('NODE   RESPONSE\nn1     Service "apid" restarted\nn2     Service "apid" restarted\n');
    expect(lastCall('/machine.MachineService/ServiceRestart').request).toEqual({ id: 'apid' });
    const bad = await cli(ws, ['service', 'apid', 'explode']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/value 'explode' is invalid for argument 'action'/);
  });

  it('time: the node clock next to the NTP server', async () => {
    const r = await cli(ws, ['-n', 'n1', 'time']);
    expect(r.out).toBe('NODE   NTP-SERVER     NODE-TIME                  NTP-SERVER-TIME\nn1     pool.ntp.org   2023-11-14T22:13:20.000Z   2023-11-14T22:13:21.000Z\n');
  });
});

describe('reboot and shutdown', () => {
  it('send the mode / force, print nothing on success', async () => {
    expect(await cli(ws, ['-n', 'n1', 'reboot', '--mode', 'powercycle'])).toMatchObject({ code: 0, out: '', err: '' });
    expect(lastCall('/machine.MachineService/Reboot')).toMatchObject({ request: { mode: 'POWERCYCLE' }, nodes: ['n1'] });
    expect((await cli(ws, ['-n', 'n1', 'shutdown', '--force'])).code).toBe(0);
    expect(lastCall('/machine.MachineService/Shutdown').request).toEqual({ force: true });
  });

  it('a failing node makes the exit code non-zero', async () => {
    const r = await cli(ws, ['-n', 'n1,node03', 'reboot']);
    expect(r).toMatchObject({ code: 1, err: 'node03: rpc error: code = Unavailable desc = connection refused\n' });
  });
});

describe('errors and endpoints', () => {
  it('fails over to the next endpoint when the first one is down', async () => {
    const w2 = await workspace(pki, [await deadEndpoint(), api.endpoint]);
    try {
      const r = await cli(w2, ['-n', 'n1', 'memory']);
      expect(r.code).toBe(0);
      expect(r.out).toContain('\nn1 ');
    } finally {
      await w2.cleanup();
    }
  });

  it('a whole-call gRPC error is printed with the node and exits 1', async () => {
    const r = await cli(ws, ['-n', 'n9', 'memory', '-e', await deadEndpoint()]);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^n9: rpc error: code = Unavailable desc = /);
  });

  it('a missing config file names the file and the way out', async () => {
    const r = await cli(ws, ['memory'], { env: { BRONZECONFIG: path.join(ws.dir, 'nope') } });
    expect(r.code).toBe(1);
    expect(r.err).toBe(`${path.join(ws.dir, 'nope')}: no such file (generate one with \`bronzectl gen config\`)\n`);
  });

  it('an unknown --context is named', async () => {
    const r = await cli(ws, ['--context', 'prod', 'memory']);
    expect(r).toMatchObject({ code: 1, err: `context "prod" is not defined in ${ws.config}\n` });
  });

  it('apply-config --insecure dials the node directly without a client certificate', async () => {
    const maint = await startApi(pki, { '/machine.MachineService/ApplyConfiguration': { unary: (r) => ({ messages: [{ metadata: null, mode: 'REBOOT', mode_details: `Applied ${r.data.length} bytes` }] }) } }, { requireClientCert: false });
    try {
      await writeFile(path.join(ws.dir, 'cp.yaml'), 'version: v1alpha1\n');
      const r = await cli(ws, ['apply-config', '--insecure', '-n', maint.endpoint, '-f', 'cp.yaml'], { env: { BRONZECONFIG: path.join(ws.dir, 'none') } });
      expect(r).toMatchObject({ code: 0, err: `${maint.endpoint}: Applied 18 bytes\n` });
      expect(maint.calls[0]).toMatchObject({ path: '/machine.MachineService/ApplyConfiguration', node: [], nodes: [], request: { mode: 'AUTO', dry_run: false } });
      const missing = await cli(ws, ['apply-config', '--insecure', '-n', maint.endpoint, '-f', 'nope.yaml']);
      expect(missing).toMatchObject({ code: 1, err: 'nope.yaml: no such file\n' });
    } finally {
      await maint.close();
    }
  });

  it('dmesg, logs and memory --insecure read a node in maintenance mode directly, as talosctl', async () => {
    const line = (text: string) => ({ metadata: null, bytes: Buffer.from(text) });
    const maint = await startApi(
      pki,
      {
        '/machine.MachineService/Dmesg': { stream: (_r, call) => void call.write(line('kern:    info: [1.0]: Linux version 6.12')) },
        '/machine.MachineService/Logs': { stream: (_r, call) => void call.write(line('maintenance mode: no machine configuration\n')) },
        '/machine.MachineService/Memory': { unary: () => ({ messages: [{ metadata: null, meminfo: { memtotal: '2097152', memfree: '1048576' } }] }) },
      },
      { requireClientCert: false },
    );
    try {
      const env = { BRONZECONFIG: path.join(ws.dir, 'none') };
      const e = maint.endpoint;
      expect(await cli(ws, ['dmesg', '--insecure', '-n', e], { env })).toMatchObject({ code: 0, out: `${e}: kern:    info: [1.0]: Linux version 6.12\n` });
      expect(await cli(ws, ['logs', 'machined', '-i', '-n', e], { env })).toMatchObject({ code: 0, out: `${e}: maintenance mode: no machine configuration\n` });
      const mem = await cli(ws, ['memory', '--insecure', '-n', e], { env });
      expect(mem.code, mem.err).toBe(0);
      expect(mem.out).toMatch(new RegExp(`\\n${e} +2048 +1024 +1024 `));
      // no routing metadata: the endpoint answers for itself
      for (const c of maint.calls) expect(c, c.path).toMatchObject({ node: [], nodes: [] });
    } finally {
      await maint.close();
    }
  });
});

describe('service apid restart', () => {
  it('waits for apid to come back after the node replied and restarted it (the connection drops meanwhile)', async () => {
    // The node's apid: replies to the restart, goes away, and a new one listens on the same port 1.5 s later.
    const services = (healthy: boolean) => ({ messages: [{ services: [{ id: 'apid', state: 'Running', health: { unknown: false, healthy } }], metadata: null }] });
    let restarted: FakeApi | undefined;
    const first = await startApi(pki, {
      '/machine.MachineService/ServiceRestart': {
        unary: (r) => {
          setTimeout(() => {
            void first.close();
            setTimeout(async () => {
              restarted = await startApi(pki, { '/machine.MachineService/ServiceList': { unary: () => services(true) } }, { port: first.port });
            }, 1500);
          }, 100);
          return { messages: [{ resp: `Service "${r.id}" restarting: the API comes back in a few seconds`, metadata: null }] };
        },
      },
      '/machine.MachineService/ServiceList': { unary: () => services(true) },
    });
    const w = await workspace(pki, [first.endpoint]);
    try {
      const t0 = Date.now();
      const r = await cli(w, ['service', 'apid', 'restart']);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toMatch(/Service "apid" restarting/);
      expect(r.err).toMatch(/apid is back: Running and healthy/);
      expect(Date.now() - t0, 'it waited for the new apid').toBeGreaterThanOrEqual(1500);
      expect(restarted!.calls.some((c) => c.path === '/machine.MachineService/ServiceList')).toBe(true);
    } finally {
      await restarted?.close();
      await w.cleanup();
    }
  }, 30_000);
});
